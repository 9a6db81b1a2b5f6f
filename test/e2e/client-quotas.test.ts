/**
 * Per-client quotas on the laptop host (issue 28 item 13; docs/OPERATIONS.md "Per-client quotas"):
 * pull subscriptions per client and replays running at once per client (count quotas, 409), and
 * upload bytes granted per client per hour (429 with Retry-After; 413 for one upload above the
 * whole quota). Each refusal is application/problem+json naming the quota, its limit and how to
 * get it raised; requests at once never pass a quota together; a partner's own quotas, set through
 * the admin API, raise the deployment's defaults without a restart.
 *
 * The host runs no queue-triggered function, so a replay once started stays running: what is
 * counted here is the start, not how long a scan takes. The defaults are set low (2 pull
 * subscriptions, 1 replay, 1000 upload bytes an hour) so the tests reach them in a few requests.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';
import { problemTypeUri } from '../support/problem-types.js';

const TYPE = 'nl.example.quota.v1';
let koerier: TestHost;
let adminToken: string;

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.partnersRefreshSeconds]: '1',
      [settingEnv.quotaMaxPullSubscriptions]: '2',
      [settingEnv.quotaMaxConcurrentReplays]: '1',
      [settingEnv.quotaUploadBytesPerHour]: '1000',
    },
    { queueTriggers: false },
  );
  adminToken = await koerier.host.issueToken('ops', ['admin']);
}, 60_000);

afterAll(async () => {
  await koerier?.stop();
});

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

const call = (token: string, method: string, path: string, body?: unknown): Promise<Answer> =>
  callApi(koerier.url, token, method, path, body);

/** A partner of its own for each test, entitled to the test's type, with `quotas` of its own when given. */
async function partner(
  quotas?: Record<string, number>,
): Promise<{ clientId: string; token: string; publisher: string }> {
  const clientId = `quota-${randomUUID().slice(0, 8)}`;
  const put = await call(adminToken, 'PUT', `/clients/${clientId}`, {
    entitlements: [{ typePrefix: TYPE }],
    ...(quotas ? { quotas } : {}),
  });
  expect(put.status).toBe(201);
  await waitForRefresh();
  return {
    clientId,
    token: await koerier.host.issueToken(clientId, ['subscriptions:manage', 'events:consume']),
    publisher: await koerier.host.issueToken(clientId, ['events:publish']),
  };
}

/** The functions read the directory again after a second (KOERIER_PARTNERS_REFRESH_SECONDS). */
const waitForRefresh = () => new Promise((resolve) => setTimeout(resolve, 1_100));

const pullSubscription = (token: string) => call(token, 'POST', '/subscriptions', { delivery: 'pull', types: [TYPE] });
const replay = (token: string, subscriptionId: string) =>
  call(token, 'POST', `/subscriptions/${subscriptionId}/replays`, {
    from: new Date(Date.now() - 3_600_000).toISOString(),
    to: new Date().toISOString(),
  });

function upload(token: string, size: number): Promise<Answer> {
  const digest = `sha-256=:${createHash('sha256').update(randomUUID()).digest('base64')}:`;
  return call(token, 'POST', '/payloads', { size, digest, contenttype: 'application/octet-stream' });
}

function expectQuotaProblem(answer: Answer, status: number, quota: string, limit: number, clientId: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toBe('application/problem+json');
  expect(answer.body).toMatchObject({ type: problemTypeUri('quota-exceeded'), status, quota, limit });
  // How to get it raised: the operators' admin API, for this client and this quota.
  expect(answer.body['detail']).toContain(`quotas.${quota}`);
  expect(answer.body['detail']).toContain(`PUT /v1/clients/${clientId}`);
}

describe('per-client quotas (issue 28, item 13)', () => {
  it('EDU-20, issue 28: a client holds at most maxPullSubscriptions pull subscriptions (409 quota-exceeded); deleting one frees its place', async () => {
    const { clientId, token } = await partner();
    const first = await pullSubscription(token);
    const second = await pullSubscription(token);
    expect([first.status, second.status]).toEqual([201, 201]);

    const third = await pullSubscription(token);
    expectQuotaProblem(third, 409, 'maxPullSubscriptions', 2, clientId);
    expect(third.body['used']).toBe(2);

    expect((await call(token, 'DELETE', `/subscriptions/${String(first.body['id'])}`)).status).toBe(200);
    expect((await pullSubscription(token)).status).toBe(201);
    expect((await pullSubscription(token)).status).toBe(409);
  });

  it('EDU-20, issue 28: six pull subscriptions asked for at once by a client with a quota of 2 make exactly 2', async () => {
    const { token } = await partner();
    const answers = await Promise.all(Array.from({ length: 6 }, () => pullSubscription(token)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 409, 409, 409, 409]);
    const listed = await call(token, 'GET', '/subscriptions');
    expect((listed.body['subscriptions'] as { delivery: string }[]).filter((s) => s.delivery === 'pull')).toHaveLength(
      2,
    );
  });

  it('EDU-20, issue 28: a client has at most maxConcurrentReplays replays running on its subscriptions (409 quota-exceeded); a cancelled one frees its place, and starts at once never pass it together', async () => {
    const { clientId, token } = await partner({ maxPullSubscriptions: 10 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(String((await pullSubscription(token)).body['id']));

    const running = await replay(token, ids[0]!);
    expect(running.status).toBe(202);
    const refused = await replay(token, ids[1]!);
    expectQuotaProblem(refused, 409, 'maxConcurrentReplays', 1, clientId);
    expect(refused.body['used']).toBe(1);

    expect(
      (await call(token, 'POST', `/subscriptions/${ids[0]}/replays/${String(running.body['id'])}/cancel`)).status,
    ).toBe(200);
    const atOnce = await Promise.all(ids.slice(1).map((id) => replay(token, id)));
    expect(atOnce.map((answer) => answer.status).sort()).toEqual([202, 409, 409, 409]);
  });

  it('EDU-20, issue 28: upload bytes per hour are counted when granted: past the quota 429 with Retry-After until the hour ends, an upload above the whole quota 413, and grants at once never pass it together', async () => {
    const { clientId, publisher } = await partner();
    expect((await upload(publisher, 600)).status).toBe(201);

    const over = await upload(publisher, 600);
    expectQuotaProblem(over, 429, 'uploadBytesPerHour', 1000, clientId);
    expect(over.body).toMatchObject({ used: 600, requested: 600 });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);

    expect((await upload(publisher, 400)).status).toBe(201);
    expectQuotaProblem(await upload(publisher, 1001), 413, 'uploadBytesPerHour', 1000, clientId);

    const other = await partner();
    const atOnce = await Promise.all(Array.from({ length: 5 }, () => upload(other.publisher, 300)));
    expect(atOnce.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 429, 429]);
  });

  it("EDU-20, issue 28: a partner's own quotas, set through the admin API, raise the defaults without a restart; bad quotas are refused", async () => {
    const { clientId, token, publisher } = await partner();
    const ids = [
      String((await pullSubscription(token)).body['id']),
      String((await pullSubscription(token)).body['id']),
    ];
    expect((await pullSubscription(token)).status).toBe(409);
    expect((await replay(token, ids[0]!)).status).toBe(202);
    expect((await replay(token, ids[1]!)).status).toBe(409);
    expect((await upload(publisher, 1000)).status).toBe(201);
    expect((await upload(publisher, 1000)).status).toBe(429);

    const quotas = { maxPullSubscriptions: 3, maxConcurrentReplays: 2, uploadBytesPerHour: 5000 };
    const raised = await call(adminToken, 'PUT', `/clients/${clientId}`, {
      entitlements: [{ typePrefix: TYPE }],
      quotas,
    });
    expect(raised.status).toBe(200);
    expect(raised.body['quotas']).toEqual(quotas);
    expect((await call(adminToken, 'GET', `/clients/${clientId}`)).body['quotas']).toEqual(quotas);
    await waitForRefresh();

    expect((await pullSubscription(token)).status).toBe(201);
    expect((await pullSubscription(token)).status).toBe(409);
    expect((await replay(token, ids[1]!)).status).toBe(202);
    expect((await upload(publisher, 2000)).status).toBe(201);
    expectQuotaProblem(await upload(publisher, 2001), 429, 'uploadBytesPerHour', 5000, clientId);

    for (const bad of [{ maxPullSubscriptions: -1 }, { maxConcurrentReplays: 1.5 }, { uploadBytes: 10 }, []]) {
      const refused = await call(adminToken, 'PUT', `/clients/${clientId}`, {
        entitlements: [{ typePrefix: TYPE }],
        quotas: bad,
      });
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      // Named in errors[] by the body's schema, as every body's members are (issue 29 item 2).
      const errors = refused.body['errors'] as { attribute: string }[];
      expect(errors.map((error) => error.attribute)).toEqual([expect.stringMatching(/^quotas/)]);
    }
  });
});
