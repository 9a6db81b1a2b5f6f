/**
 * Issue 29 item 5: the one middleware of the generated client, against a fetch the test plays the
 * gateway with: the Idempotency-Key of a mutating call is made once and sent again on every retry,
 * 429 and 503 are retried after Retry-After within a bound, a 401 renews the token once, and a
 * refusal is one error type with the problem's members.
 */
import { describe, expect, it } from 'vitest';
import {
  createKoerierClient,
  KoerierProblem,
  retryAfterMs,
  type KoerierClientOptions,
} from '../../../client/koerier-client.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly key: string | null;
  readonly authorization: string | null;
  readonly body: string;
}

/** A client whose fetch answers from `answers` in turn (the last one repeats) and records each request. */
function clientAnswering(answers: (() => Response)[], options: Partial<KoerierClientOptions> = {}) {
  const seen: Seen[] = [];
  const waits: number[] = [];
  const fetch = async (request: Request) => {
    seen.push({
      method: request.method,
      url: request.url,
      key: request.headers.get('idempotency-key'),
      authorization: request.headers.get('authorization'),
      body: await request.text(),
    });
    return answers[Math.min(seen.length - 1, answers.length - 1)]!();
  };
  const client = createKoerierClient({
    baseUrl: 'https://koerier.example/v1',
    token: 'token-1',
    fetch,
    sleep: async (ms) => void waits.push(ms),
    ...options,
  });
  return { client, seen, waits };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const problem = (status: number, headers: Record<string, string> = {}) =>
  json(status, { type: '/v1/problems/unavailable', title: 'Unavailable', status, detail: 'try later' }, headers);
const subscription = { delivery: 'pull' as const, types: ['nl.example.v1'] };
const created = json(201, { id: 'sub-1' });

describe('the generated client middleware (issue 29 item 5)', () => {
  it('issue 29 item 5, EDU-IDEM: a mutating call without a key gets one, and each retry of it sends the same key and body', async () => {
    const { client, seen } = clientAnswering([problem(503, { 'retry-after': '0' }), problem(429), created]);
    const answer = await client.POST('/subscriptions', { body: subscription });
    expect(answer.data).toEqual({ id: 'sub-1' });
    expect(seen).toHaveLength(3);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(new Set(seen.map((s) => s.body))).toEqual(new Set([JSON.stringify(subscription)]));
  });

  it('issue 29 item 5, EDU-IDEM: two calls get two keys; a key the caller gives is the one sent', async () => {
    const { client, seen } = clientAnswering([created]);
    await client.POST('/subscriptions', { body: subscription });
    await client.POST('/subscriptions', { body: subscription });
    await client.POST('/subscriptions', { body: subscription, params: { header: { 'Idempotency-Key': 'mine-1' } } });
    expect(seen[0]!.key).not.toBe(seen[1]!.key);
    expect(seen[2]!.key).toBe('mine-1');
  });

  it('issue 29 item 5: a read carries no Idempotency-Key', async () => {
    const { client, seen } = clientAnswering([json(200, { id: 'sub-1' })]);
    await client.GET('/subscriptions/{id}', { params: { path: { id: 'sub-1' } } });
    expect(seen[0]).toMatchObject({ method: 'GET', key: null, url: 'https://koerier.example/v1/subscriptions/sub-1' });
    expect(seen[0]!.authorization).toBe('Bearer token-1');
  });

  it('issue 29 item 5: 429 and 503 wait for Retry-After (seconds or an HTTP date), other answers are not retried', async () => {
    const date = new Date(Date.now() + 5_000).toUTCString();
    const { client, waits, seen } = clientAnswering([
      problem(429, { 'retry-after': '2' }),
      problem(503, { 'retry-after': date }),
      created,
    ]);
    await client.POST('/subscriptions', { body: subscription });
    expect(waits[0]).toBe(2000);
    expect(waits[1]).toBeGreaterThan(2000);
    expect(waits[1]).toBeLessThanOrEqual(5000);
    expect(seen).toHaveLength(3);

    const once = clientAnswering([problem(500), created]);
    await expect(once.client.POST('/subscriptions', { body: subscription })).rejects.toMatchObject({ status: 500 });
    expect(once.seen).toHaveLength(1);

    // A caller may widen what is retried (the CLI retries every 5xx).
    const wider = clientAnswering([problem(500), created], { retryOn: (status) => status >= 500 });
    expect((await wider.client.POST('/subscriptions', { body: subscription })).data).toEqual({ id: 'sub-1' });
    expect(wider.seen).toHaveLength(2);
  });

  it('issue 29 item 5: a Retry-After beyond the bound is honoured by not retrying, and retries stop after `retries`', async () => {
    const far = clientAnswering([problem(503, { 'retry-after': '3600' }), created], { maxRetryAfterMs: 60_000 });
    await expect(far.client.POST('/subscriptions', { body: subscription })).rejects.toMatchObject({ status: 503 });
    expect(far.seen).toHaveLength(1);

    const busy = clientAnswering([problem(503)], { retries: 2 });
    await expect(busy.client.POST('/subscriptions', { body: subscription })).rejects.toBeInstanceOf(KoerierProblem);
    expect(busy.seen).toHaveLength(3);
    // No Retry-After: an exponential backoff.
    expect(busy.waits[1]!).toBeGreaterThanOrEqual(busy.waits[0]!);
  });

  it('issue 29 item 5: a network failure is retried with the same key, and surfaces once the retries are spent', async () => {
    let calls = 0;
    const keys: (string | null)[] = [];
    const fetch = async (request: Request) => {
      keys.push(request.headers.get('idempotency-key'));
      if (++calls < 3) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
      return created();
    };
    const reasons: string[] = [];
    const client = createKoerierClient({
      baseUrl: 'https://koerier.example/v1',
      fetch,
      sleep: async () => undefined,
      onRetry: (reason) => void reasons.push(reason),
    });
    expect((await client.POST('/subscriptions', { body: subscription })).data).toEqual({ id: 'sub-1' });
    expect(reasons).toEqual(['ECONNRESET', 'ECONNRESET']);
    expect(new Set(keys).size).toBe(1);

    const down = createKoerierClient({
      baseUrl: 'https://koerier.example/v1',
      retries: 1,
      sleep: async () => undefined,
      fetch: async () => {
        throw new TypeError('fetch failed');
      },
    });
    await expect(down.GET('/subscriptions')).rejects.toThrow('fetch failed');
  });

  it('issue 29 item 5: a refusal is a KoerierProblem with status, type, title, detail and errors[]', async () => {
    const refusal = {
      type: '/v1/problems/invalid-subscription',
      title: 'Invalid subscription',
      status: 400,
      detail: 'The subscription is not valid.',
      errors: [{ attribute: 'types', rule: 'required', message: 'types is required' }],
    };
    const { client } = clientAnswering([json(400, refusal, { 'content-type': 'application/problem+json' })]);
    const error = await client.POST('/subscriptions', { body: subscription }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KoerierProblem);
    expect(error).toMatchObject({
      status: 400,
      type: refusal.type,
      title: refusal.title,
      detail: refusal.detail,
      errors: refusal.errors,
      slug: 'invalid-subscription',
    });

    const html = clientAnswering([() => new Response('<h1>Bad gateway</h1>', { status: 502 })]);
    const proxy = await html.client.GET('/subscriptions').catch((e: unknown) => e);
    expect(proxy).toMatchObject({
      status: 502,
      type: 'about:blank',
      title: 'HTTP 502',
      detail: '<h1>Bad gateway</h1>',
    });
  });

  it('issue 29 item 5: with a token source, a 401 asks for a new token once and resends with it', async () => {
    const asked: boolean[] = [];
    const token = { token: async (renew?: boolean) => (asked.push(renew === true), renew ? 'token-2' : 'token-1') };
    const { client, seen } = clientAnswering([problem(401), created], { token });
    await client.POST('/subscriptions', { body: subscription });
    expect(seen.map((s) => s.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
    expect(seen[0]!.key).toBe(seen[1]!.key);
    expect(asked).toEqual([false, true]);

    const still = clientAnswering([problem(401)], { token });
    await expect(still.client.GET('/subscriptions')).rejects.toMatchObject({ status: 401 });
    expect(still.seen).toHaveLength(2);
  });

  it('issue 29 item 5: Retry-After reads delay-seconds and HTTP dates, and nothing else', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs('Sun, 29 Nov 2026 10:00:05 GMT', Date.parse('2026-11-29T10:00:00Z'))).toBe(5000);
    expect(retryAfterMs('-1')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});
