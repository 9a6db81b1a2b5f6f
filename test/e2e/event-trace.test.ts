/**
 * Issue 30 item 1 end to end on the laptop host: one event followed from its 202 to each
 * subscription it reached (a push receiver and a pull subscription), and a second publication of
 * the same source + id answered `duplicate` and named in the trace as a duplicate of the first —
 * with who may see which part: the publisher, each subscriber (its own subscriptions only),
 * nobody else (404, as for an unknown event).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, callApi, publishEvents, type ApiAnswer, type KoerierClient } from '../support/koerier-api.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

// A URL source, so its slashes travel percent-encoded in the trace's path.
const SOURCE = 'https://leerlingadministratie.example/scholen/99ZZ';
const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let dir: string;
let receiver: HttpsReceiver;
let publisher: KoerierClient;
let publisherToken: string;
let subscriberToken: string;
let cli: CliUser;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-trace-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
    // The publisher subscribes too (a pull subscription), so it owns one of the two routed subscriptions.
    [settingEnv.entitlements]: JSON.stringify({
      'dev-subscriber': [{ typePrefix: '' }],
      'dev-publisher': [{ typePrefix: '' }],
    }),
  });
  // Explicit scopes: neither may hold `admin`, which would show every subscription.
  publisherToken = await koerier.token('dev-publisher', ['events:publish', 'subscriptions:manage', 'events:consume']);
  publisher = apiAs(koerier.url, publisherToken);
  subscriberToken = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  receiver = await startHttpsReceiver({ authority });
  cli = await cliUser(koerier.url);
});

afterAll(async () => {
  await receiver?.close();
  await cli?.remove();
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

function traceAs(token: string, source: string, id: string): Promise<ApiAnswer> {
  return callApi(koerier.url, token, 'GET', `/events/${encodeURIComponent(source)}/${encodeURIComponent(id)}`);
}

interface TracedSubscription {
  id: string;
  delivery: string;
  state: string;
  attemptCount: number;
  attempts: { outcome: string; status?: number; deliveryId: string }[];
}

describe('the event trace (issue 30 item 1)', () => {
  const type = `nl.edu.leerling.ingeschreven.${randomUUID().slice(0, 8)}.v1`;
  const id = randomUUID();
  const event = { specversion: '1.0', id, source: SOURCE, type, data: { leerling: 'L-1' } };
  const firstKey = randomUUID();
  let pushId: string;
  let pullId: string;

  it('SELF-1, issue 30 item 1: the trace shows the acceptance, the routed subscriptions, their delivery state and attempts; each caller sees its own', async () => {
    const push = await callApi(koerier.url, subscriberToken, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
    });
    expect(push.status).toBe(201);
    pushId = push.body['id'] as string;
    const pull = await callApi(koerier.url, publisherToken, 'POST', '/subscriptions', {
      delivery: 'pull',
      types: [type],
    });
    expect(pull.status).toBe(201);
    pullId = pull.body['id'] as string;

    const { accepted } = await publishEvents(publisher, event, { idempotencyKey: firstKey });
    expect(accepted.accepted).toEqual([{ source: SOURCE, id }]);
    expect(accepted.duplicateCount).toBeUndefined();

    const received = await callApi(koerier.url, publisherToken, 'POST', `/subscriptions/${pullId}/events/receive`, {
      maxevents: 10,
      waitseconds: 5,
    });
    expect((received.body['events'] as { id: string }[]).map((e) => e.id)).toEqual([id]);

    // The publisher: the whole acceptance and the routed count, but only the subscription it owns.
    const mine = await eventually('the push delivery traced', async () => {
      const answer = await traceAs(publisherToken, SOURCE, id);
      return answer.status === 200 && answer.body['routed'] ? answer : undefined;
    });
    expect(mine.body).toMatchObject({
      source: SOURCE,
      id,
      state: 'routed',
      accepted: { publisher: 'dev-publisher', idempotencyKey: firstKey },
      routed: { subscriptionCount: 2 },
    });
    const acceptedAt = Date.parse((mine.body['accepted'] as { at: string }).at);
    expect(Date.now() - acceptedAt).toBeLessThan(60_000);
    const publisherSees = mine.body['subscriptions'] as TracedSubscription[];
    expect(publisherSees.map((s) => [s.id, s.delivery, s.state])).toEqual([[pullId, 'pull', 'queued']]);

    // The subscriber: its push subscription, delivered once, and none of the publisher's details.
    const theirs = await eventually('the push attempt in the trace', async () => {
      const answer = await traceAs(subscriberToken, SOURCE, id);
      const [only] = (answer.body['subscriptions'] ?? []) as TracedSubscription[];
      return only?.state === 'delivered' ? answer : undefined;
    });
    const subscriberSees = theirs.body['subscriptions'] as TracedSubscription[];
    expect(subscriberSees).toHaveLength(1);
    expect(subscriberSees[0]).toMatchObject({ id: pushId, delivery: 'push', state: 'delivered', attemptCount: 1 });
    expect(subscriberSees[0]!.attempts[0]).toMatchObject({ outcome: 'delivered', status: 204 });
    expect(theirs.body['accepted']).not.toHaveProperty('idempotencyKey');
    expect(theirs.body['accepted']).not.toHaveProperty('publisher');
    expect(theirs.body['routed']).not.toHaveProperty('subscriptionCount');
    expect(receiver.requests).toHaveLength(1);

    // A stranger, and an unknown event: the same 404.
    const stranger = await koerier.host.issueToken('partner-stranger', ['subscriptions:read', 'events:publish']);
    const refused = await traceAs(stranger, SOURCE, id);
    const unknown = await traceAs(publisherToken, SOURCE, randomUUID());
    expect([refused.status, unknown.status]).toEqual([404, 404]);
    expect(refused.body['title']).toBe(unknown.body['title']);
  });

  it('SELF-1, issue 30 item 1, EDU-IDEM-15: a second publication of the same source + id under another key is answered `duplicate`, not delivered again, and the trace names the first acceptance', async () => {
    const secondKey = randomUUID();
    const { accepted } = await publishEvents(
      publisher,
      { ...event, data: { leerling: 'L-2' } },
      { idempotencyKey: secondKey },
    );
    expect(accepted).toMatchObject({
      acceptedCount: 1,
      accepted: [{ source: SOURCE, id, duplicate: true }],
      duplicateCount: 1,
    });

    const trace = await eventually('the duplicate noted', async () => {
      const answer = await traceAs(publisherToken, SOURCE, id);
      return answer.body['duplicates'] ? answer : undefined;
    });
    expect(trace.body).toMatchObject({
      accepted: { idempotencyKey: firstKey },
      duplicates: { count: 1, latest: { idempotencyKey: secondKey } },
      routed: { subscriptionCount: 2 },
    });
    // Still one delivery to the receiver (CE-17).
    expect(receiver.requests).toHaveLength(1);
  });

  it('SELF-1, issue 30 item 1: `koerier events show` prints the trace, as a table and as JSON', async () => {
    const env = {
      KOERIER_CLIENT_ID: 'dev-subscriber',
      KOERIER_CLIENT_SECRET: koerier.host.localConfig.clients['dev-subscriber']!.secret,
      KOERIER_SCOPE: 'subscriptions:manage',
    };
    const table = await cli.run(['events', 'show', SOURCE, id], { env });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(pushId);
    expect(table.stdout).toContain('delivered');
    expect(table.stdout).not.toContain(pullId);
    const json = await cli.run(['--json', 'events', 'show', SOURCE, id], { env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, state: 'routed', subscriptions: [{ id: pushId }] });
  });
});
