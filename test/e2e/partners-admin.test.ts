/**
 * Partners at run time (issue 12, item 3) on the laptop host: the admin API for clients, their
 * publish grants and entitlements, and a partner added through it publishing and subscribing
 * without a restart. The functions' refresh interval is set to 1 s here (30 s by default, at most
 * 60 s in production), so the test proves that the functions' copy of the directory refreshes,
 * not how long a minute is.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger } from '../../functions/app/logger.js';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { eventually } from '../support/waiting.js';
import { problemTypeUri } from '../support/problem-types.js';

const authority = createLocalCertificateAuthority();
let dir: string;
let receiver: HttpsReceiver | undefined;
const receivers: HttpsReceiver[] = [];

let koerier: TestHost;
let adminToken: string;
const logLines: string[] = [];
let restoreLogger: (() => void) | undefined;

beforeAll(async () => {
  restoreLogger = logger.captureTo((line) => logLines.push(line));
  dir = await mkdtemp(join(tmpdir(), 'koerier-partners-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.partnersRefreshSeconds]: '1',
    // The deploy-time configuration: it seeds the directory, nothing more.
    [settingEnv.publishers]: JSON.stringify({ 'dev-publisher': ['urn:nld:oin:0001'], 'dev-subscriber': [] }),
    [settingEnv.entitlements]: JSON.stringify({ 'dev-subscriber': [{ typePrefix: '' }] }),
    [settingEnv.validationAgreedClients]: 'school-s,dev-subscriber',
    // A failed push attempt comes round again within a second (issue 28, item 9).
    [settingEnv.deliveryRetryInitialSeconds]: '1',
    [settingEnv.deliveryRetryMaxDelaySeconds]: '1',
  });
  adminToken = await koerier.host.issueToken('ops', ['admin']);
});
afterAll(async () => {
  restoreLogger?.();
  await receiver?.close();
  await Promise.all(receivers.map((each) => each.close()));
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A call as the administrator (or as `token`), answered whatever its status. */
const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, token = adminToken) =>
  callApi(koerier.url, token, method, path, body, headers);

const publish = async (token: string, source: string) =>
  (
    await tryPublish(koerier.url, token, {
      specversion: '1.0',
      id: randomUUID(),
      source,
      type: 'nl.edu.test.v1',
      data: {},
    })
  ).status;

describe('partners admin API on the laptop host (issue 12)', () => {
  it("issue 12: the deploy-time configuration seeds the directory, marked as the deployment's", async () => {
    const listed = await call('GET', '/clients');
    expect(listed.status).toBe(200);
    expect(listed.body['clients']).toEqual([
      expect.objectContaining({
        clientId: 'dev-publisher',
        publishGrants: ['urn:nld:oin:0001'],
        entitlements: [],
        updatedBy: 'deployment',
        version: 1,
      }),
      expect.objectContaining({
        clientId: 'dev-subscriber',
        publishGrants: [],
        entitlements: [{ typePrefix: '' }],
        updatedBy: 'deployment',
      }),
    ]);
  });

  it('issue 12, EDU-IN: a partner added through the API publishes without a restart; removed, it publishes no more', async () => {
    const partnerToken = await koerier.host.issueToken('school-b', ['events:publish', 'subscriptions:manage']);
    // The ingest has read (and cached) the directory: school-b is no partner yet.
    expect(await publish(partnerToken, 'urn:nld:oin:0002:lvs')).toBe(403);

    const created = await call('PUT', '/clients/school-b', {
      description: 'School B',
      publishGrants: ['urn:nld:oin:0002'],
      entitlements: [],
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    expect(created.body).toMatchObject({ clientId: 'school-b', updatedBy: 'ops', version: 1 });

    await eventually(
      'school-b may publish',
      async () => (await publish(partnerToken, 'urn:nld:oin:0002:lvs')) === 202,
      { timeoutMs: 5000 },
    );
    // Within its grant only.
    expect(await publish(partnerToken, 'urn:nld:oin:0001')).toBe(403);

    const removed = await call('DELETE', '/clients/school-b', undefined, { 'if-match': '"1"' });
    expect(removed.status).toBe(204);
    await eventually(
      'school-b may publish no more',
      async () => (await publish(partnerToken, 'urn:nld:oin:0002:lvs')) === 403,
      { timeoutMs: 5000 },
    );
  });

  it('issue 12, EDU-7: an entitlement given through the API lets the partner subscribe without a restart', async () => {
    const partnerToken = await koerier.host.issueToken('school-s', ['subscriptions:manage']);
    const subscription = {
      sink: 'http://127.0.0.1:9/hook',
      types: ['nl.edu.test.v1'],
      validation: 'agreed',
      sinkcredential: {
        credentialtype: 'CLIENTCREDENTIALS',
        tokenurl: 'http://127.0.0.1:9/oauth/token',
        clientid: 'koerier',
        clientsecret: 'secret',
      },
    };
    const before = await call('POST', '/subscriptions', subscription, {}, partnerToken);
    expect(before.status).toBe(403);
    expect(before.body['type']).toBe(problemTypeUri('subscription-not-entitled'));

    expect((await call('PUT', '/clients/school-s', { entitlements: [{ typePrefix: 'nl.edu.' }] })).status).toBe(201);
    const after = await eventually(
      'school-s may subscribe',
      async () => {
        const answer = await call('POST', '/subscriptions', subscription, {}, partnerToken);
        return answer.status === 403 ? undefined : answer;
      },
      { timeoutMs: 5000 },
    );
    expect(after.status).toBe(201);
  });

  it("EDU-IN: a grant overlapping another partner's is refused with 409, naming both", async () => {
    const refused = await call('PUT', '/clients/school-c', { publishGrants: ['urn:nld:oin:0001:lvs'] });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.body).toMatchObject({ type: problemTypeUri('publish-grants-overlap') });
    expect(refused.body['detail']).toContain('"dev-publisher" (grant "urn:nld:oin:0001")');
    expect((await call('GET', '/clients/school-c')).status).toBe(404);
  });

  it('EDU-IDEM-3: a change repeated with its Idempotency-Key is replayed with its ETag, not made twice', async () => {
    const key = randomUUID();
    const first = await call(
      'PUT',
      '/clients/school-d',
      { publishGrants: ['urn:nld:oin:0004'] },
      { 'idempotency-key': key },
    );
    const again = await call(
      'PUT',
      '/clients/school-d',
      { publishGrants: ['urn:nld:oin:0004'] },
      { 'idempotency-key': key },
    );
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('etag')).toBe('"1"');
    expect((await call('GET', '/clients/school-d')).body['version']).toBe(1);
    // Optimistic locking: a stale ETag is a 412.
    expect((await call('PUT', '/clients/school-d', { publishGrants: [] }, { 'if-match': '"7"' })).status).toBe(412);
  });

  it('issue 12: only the admin scope manages partners, and every change is audited with who, what and when', async () => {
    const publisherToken = await koerier.token('dev-publisher', ['events:publish', 'subscriptions:manage']);
    const refused = await call('PUT', '/clients/dev-publisher', { publishGrants: [''] }, {}, publisherToken);
    expect(refused.status).toBe(403);
    expect((await call('GET', '/clients', undefined, {}, publisherToken)).status).toBe(403);

    await call('PUT', '/clients/school-e', { publishGrants: ['urn:nld:oin:0005'] });
    const audit = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['message'] === 'client changed');
    expect(audit).toContainEqual(
      expect.objectContaining({
        action: 'created',
        by: 'ops',
        clientId: 'school-e',
        publishGrants: ['urn:nld:oin:0005'],
        at: expect.any(String),
      }),
    );
  });
  it("EDU-7, EDU-18: an entitlement narrowed through the API withholds the subscriber's dead letters from a redrive, without a restart", async () => {
    receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 415 }) });
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    const type = `nl.edu.partners.${randomUUID().slice(0, 8)}.v1`;
    const created = await call(
      'POST',
      '/subscriptions',
      { sink: receiver.url, types: [type], validation: 'agreed', sinkcredential: receiver.sinkCredential },
      {},
      subscriber,
    );
    expect(created.status).toBe(201);
    const id = created.body['id'] as string;
    const publisher = await koerier.token('dev-publisher', ['events:publish']);
    const published = await tryPublish(koerier.url, publisher, {
      specversion: '1.0',
      id: randomUUID(),
      source: 'urn:nld:oin:0001',
      type,
      data: {},
    });
    expect(published.status).toBe(202);
    await eventually(
      'the dead letter',
      async () =>
        (
          (await call('GET', `/subscriptions/${id}/dead-letters`, undefined, {}, subscriber)).body[
            'deadLetters'
          ] as unknown[]
        ).length > 0,
    );

    expect((await call('PUT', '/clients/dev-subscriber', { entitlements: [{ typePrefix: 'nl.other.' }] })).status).toBe(
      200,
    );
    // The directory is read again once its copy is older than the refresh interval (1 s here). A
    // redrive before that still sees the old grant and sends the dead letter on; its delivery then
    // finds the grant gone and settles it unsent (issue 29 item 3), so there would be nothing left to
    // withhold. So: one redrive, after the interval.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const redrive = await call('POST', `/subscriptions/${id}/dead-letters/redrive`, { all: true }, {}, subscriber);
    expect(redrive.status).toBe(202);
    expect(redrive.body['withheld']).toEqual([expect.objectContaining({ reason: 'not-entitled' })]);
    expect(redrive.body['redriven']).toEqual([]);
  });
});

describe('an entitlement withdrawn while events wait (issue 28 item 9, issue 29 item 3)', () => {
  /** Longer than the functions' refresh interval (1 s here): every function has read the directory since. */
  const refreshed = () => new Promise((resolve) => setTimeout(resolve, 2_500));
  const entitle = async (entitlements: unknown[]) => {
    expect((await call('PUT', '/clients/dev-subscriber', { entitlements })).status).toBe(200);
    await refreshed();
  };
  const routed = (id: string) =>
    eventually(
      `event ${id} routed`,
      () => logLines.some((line) => line.includes('"event routed"') && line.includes(id)),
      { timeoutMs: 10_000 },
    );
  const publishOf = async (type: string) => {
    const id = randomUUID();
    const publisher = await koerier.token('dev-publisher', ['events:publish']);
    const published = await tryPublish(koerier.url, publisher, {
      specversion: '1.0',
      id,
      source: 'urn:nld:oin:0001',
      type,
      data: {},
    });
    expect(published.status).toBe(202);
    return id;
  };
  const deadLettersOf = async (id: string, token: string) =>
    (await call('GET', `/subscriptions/${id}/dead-letters`, undefined, {}, token)).body['deadLetters'] as {
      reason: string;
      events: { id: string }[];
    }[];

  const settledUnsent = (subscriptionId: string) =>
    eventually(
      `a withheld delivery of ${subscriptionId} settled`,
      () =>
        logLines.find((line) => line.includes('"delivery withheld: settled unsent"') && line.includes(subscriptionId)),
      { timeoutMs: 15_000 },
    );

  it('EDU-7, EDU-17, issue 29 item 3: a pull receive after the entitlement was withdrawn does not hand out the queued event: it is settled unsent (logged, not a dead letter) and stays gone when the grant is back', async () => {
    await entitle([{ typePrefix: '' }]);
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
    const type = `nl.edu.revoked.${randomUUID().slice(0, 8)}.v1`;
    const created = await call('POST', '/subscriptions', { delivery: 'pull', types: [type] }, {}, subscriber);
    expect(created.status).toBe(201);
    const id = created.body['id'] as string;
    const eventId = await publishOf(type);
    await routed(eventId);

    await entitle([{ typePrefix: 'nl.other.' }]);
    const receive = async () =>
      (await call('POST', `/subscriptions/${id}/events/receive`, { maxevents: 10, waitseconds: 1 }, {}, subscriber))
        .body['events'] as { id: string }[];
    expect(await receive()).toEqual([]);
    expect(await settledUnsent(id)).toContain('"reason":"not-entitled"');
    expect(await deadLettersOf(id, subscriber)).toEqual([]);

    // Settled, not parked: a grant that comes back does not bring it back (a replay would).
    await entitle([{ typePrefix: '' }]);
    expect(await receive()).toEqual([]);
  });

  it('EDU-8, EDU-17, issue 29 item 3: a pull receive after the filters changed does not hand out the event they no longer match: it is settled unsent (no-longer-matches), not a dead letter', async () => {
    await entitle([{ typePrefix: '' }]);
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
    const type = `nl.edu.refiltered.${randomUUID().slice(0, 8)}.v1`;
    const created = await call('POST', '/subscriptions', { delivery: 'pull', types: [type] }, {}, subscriber);
    expect(created.status).toBe(201);
    const id = created.body['id'] as string;
    const eventId = await publishOf(type);
    await routed(eventId);

    const read = await call('GET', `/subscriptions/${id}`, undefined, {}, subscriber);
    const changed = await call(
      'PATCH',
      `/subscriptions/${id}`,
      { filters: [{ prefix: { subject: 'leerling-' } }] },
      { 'if-match': read.headers.get('etag')! },
      subscriber,
    );
    expect(changed.status).toBe(200);
    // The pull function reads a subscription again within 10 s.
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    const received = await call(
      'POST',
      `/subscriptions/${id}/events/receive`,
      { maxevents: 10, waitseconds: 1 },
      {},
      subscriber,
    );
    expect(received.body['events']).toEqual([]);
    expect(await settledUnsent(id)).toContain('"reason":"no-longer-matches"');
    expect(await deadLettersOf(id, subscriber)).toEqual([]);
  });

  it('EDU-7, EDU-18, issue 29 item 3: a push retry after the entitlement was withdrawn is not sent: the delivery is settled unsent (logged, not a dead letter)', async () => {
    await entitle([{ typePrefix: '' }]);
    const target = await startHttpsReceiver({ authority, script: scripts.always({ respond: 503 }) });
    receivers.push(target);
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    const type = `nl.edu.revoked.${randomUUID().slice(0, 8)}.v1`;
    const created = await call(
      'POST',
      '/subscriptions',
      { sink: target.url, types: [type], validation: 'agreed', sinkcredential: target.sinkCredential },
      {},
      subscriber,
    );
    expect(created.status).toBe(201);
    const id = created.body['id'] as string;
    await publishOf(type);
    await target.waitForRequests(1, { timeoutMs: 10_000 });

    expect((await call('PUT', '/clients/dev-subscriber', { entitlements: [{ typePrefix: 'nl.other.' }] })).status).toBe(
      200,
    );
    expect(await settledUnsent(id)).toContain('"reason":"not-entitled"');
    expect(await deadLettersOf(id, subscriber)).toEqual([]);
    // Retries before the delivery function read the change may have gone out; none after it was settled.
    const sent = target.requests.length;
    await refreshed();
    expect(target.requests).toHaveLength(sent);
  });
});
