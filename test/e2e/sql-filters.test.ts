/**
 * Issue 32 item 5: `sql` filters end to end on the laptop host. A push and a pull subscription,
 * each with a CESQL filter, receive exactly the events their expressions match among 1,000 mixed
 * events published in batches; a replay over the same events, for a subscription created
 * afterwards with the same filter, sends exactly those again. Which events match is worked out
 * here in plain TypeScript from how each event was made, not by Koerier's CESQL engine.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, callApi, publishEvents, type ApiAnswer } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e-cesql';
const TYPES = [
  'nl.edu.leerling.ingeschreven.v1',
  'nl.edu.leerling.uitgeschreven.v1',
  'nl.edu.rooster.gewijzigd.v1',
  'nl.overheid.zaken.zaak.aangemaakt.v1',
] as const;
const SCHOOLS = ['12AB', '34CD', '56EF', undefined] as const;

/** The example: pins `type` by prefix, so the route index files it under `nl.edu.leerling.`. */
const PUSH_SQL =
  "type LIKE 'nl.edu.leerling.%' AND subject <> 'test' AND (EXISTS schoolcode AND schoolcode IN ('12AB', '34CD'))";
/** Pins `type` by IN; reads an integer extension. */
const PULL_SQL =
  "type IN ('nl.overheid.zaken.zaak.aangemaakt.v1', 'nl.edu.rooster.gewijzigd.v1') AND (NOT EXISTS schoolcode OR schoolcode = '56EF') AND volgnummer % 2 = 0";

interface Made {
  readonly id: string;
  readonly type: (typeof TYPES)[number];
  readonly subject: string;
  readonly schoolcode: string | undefined;
  readonly volgnummer: number;
}

const pushWants = (e: Made) =>
  e.type.startsWith('nl.edu.leerling.') && e.subject !== 'test' && (e.schoolcode === '12AB' || e.schoolcode === '34CD');
const pullWants = (e: Made) =>
  (e.type === 'nl.overheid.zaken.zaak.aangemaakt.v1' || e.type === 'nl.edu.rooster.gewijzigd.v1') &&
  (e.schoolcode === undefined || e.schoolcode === '56EF') &&
  e.volgnummer % 2 === 0;

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let receiver: HttpsReceiver;
let subscriber: string;
let pushId: string;
let pullId: string;
const made: Made[] = [];
let startedAt: string;

/** One call as the subscriber, answered whatever its status; an answered `Location` is turned back into an API path. */
function api(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  return callApi(koerier.url, subscriber, method, path.replace(/^\/v1(?=\/)/, ''), body);
}

/** Receives and acknowledges until nothing more comes for a while; the ids received. */
async function drain(subscriptionId: string, atLeast: number): Promise<string[]> {
  const ids: string[] = [];
  const receive = async () => {
    const answer = await api('POST', `/subscriptions/${subscriptionId}/events/receive`, {
      maxevents: 100,
      waitseconds: 0,
    });
    expect(answer.status).toBe(200);
    const events = answer.body['events'] as { id: string }[];
    const locks = answer.body['locks'] as { locktoken: string }[];
    ids.push(...events.map((event) => event.id));
    if (locks.length > 0) {
      const acknowledged = await api('POST', `/subscriptions/${subscriptionId}/events/acknowledge`, {
        locktokens: locks.map((lock) => lock.locktoken),
      });
      expect(acknowledged.status).toBe(200);
    }
    return events.length;
  };
  await eventually(`${atLeast} pulled events`, async () => (await receive(), ids.length >= atLeast), {
    timeoutMs: 90_000,
    intervalMs: 200,
  });
  await staysQuiet('an event beyond the matching ones', async () => (await receive()) > 0 && ids.length, 1_500);
  return ids;
}

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.entitlements]: JSON.stringify({ 'dev-subscriber': [{ typePrefix: 'nl.' }] }),
    },
    { trustAuthority: authority },
  );
  const publishing = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
  receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });

  const push = await api('POST', '/subscriptions', {
    sink: receiver.url,
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
    filters: [{ sql: PUSH_SQL }],
  });
  expect(push.status).toBe(201);
  pushId = push.body['id'] as string;
  const pull = await api('POST', '/subscriptions', { delivery: 'pull', filters: [{ sql: PULL_SQL }] });
  expect(pull.status).toBe(201);
  pullId = pull.body['id'] as string;

  startedAt = new Date(Date.now() - 1_000).toISOString();
  for (let i = 0; i < 1_000; i++) {
    made.push({
      id: `cesql-${i}-${randomUUID()}`,
      type: TYPES[(i * 7) % TYPES.length]!,
      subject: i % 5 === 0 ? 'test' : `leerling/${i}`,
      schoolcode: SCHOOLS[(i * 3 + (i >> 2)) % SCHOOLS.length],
      volgnummer: i,
    });
  }
  for (let start = 0; start < made.length; start += 100) {
    const batch = made.slice(start, start + 100).map((e) => ({
      specversion: '1.0',
      id: e.id,
      source: SOURCE,
      type: e.type,
      subject: e.subject,
      ...(e.schoolcode === undefined ? {} : { schoolcode: e.schoolcode }),
      volgnummer: e.volgnummer,
      data: { n: e.volgnummer },
    }));
    const { response } = await publishEvents(publishing, batch);
    expect(response.status).toBe(202);
  }
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
});

describe('CESQL-5, issue 32 item 5: sql filters end to end', () => {
  it('CESQL-5, issue 32 item 5: the push subscription receives exactly the events its sql filter matches among 1,000', async () => {
    const expected = made.filter(pushWants).map((e) => e.id);
    expect(expected.length).toBeGreaterThan(100);
    expect(expected.length).toBeLessThan(400);
    const posts = () => receiver.requests.filter((r) => r.method === 'POST');
    await eventually(`${expected.length} push deliveries`, () => posts().length >= expected.length, {
      timeoutMs: 120_000,
      intervalMs: 250,
    });
    await staysQuiet(
      'a push delivery beyond the matching ones',
      () => posts().length > expected.length && posts().length,
      1_500,
    );
    const received = posts().map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(received.sort()).toEqual([...expected].sort());
    expect(pushId).toBeTruthy();
  }, 150_000);

  it('CESQL-5, issue 32 item 5: the pull subscription receives exactly the events its sql filter matches among 1,000', async () => {
    const expected = made.filter(pullWants).map((e) => e.id);
    expect(expected.length).toBeGreaterThan(50);
    const received = await drain(pullId, expected.length);
    expect(received.sort()).toEqual([...expected].sort());
  }, 150_000);

  it('CESQL-5, issue 32 item 5: a replay applies the same sql filter: a subscription created afterwards gets exactly the matching events again', async () => {
    const replayed = await api('POST', '/subscriptions', { delivery: 'pull', filters: [{ sql: PULL_SQL }] });
    expect(replayed.status).toBe(201);
    const id = replayed.body['id'] as string;
    const expected = made.filter(pullWants).map((e) => e.id);
    // The router archives a batch before it routes it, and the pull test above has drained all it routed.
    const started = await api('POST', `/subscriptions/${id}/replays`, {
      from: startedAt,
      to: new Date().toISOString(),
    });
    expect(started.status).toBe(202);
    const progress = await eventually(
      'the replay over',
      async () => {
        const state = await api('GET', started.location!);
        return state.body['state'] !== 'running' && state.body;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(progress).toMatchObject({
      state: 'finished',
      scanned: 1_000,
      matched: expected.length,
      sent: expected.length,
    });
    const received = await drain(id, expected.length);
    expect(received.sort()).toEqual([...expected].sort());
  }, 150_000);
});
