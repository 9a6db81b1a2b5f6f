import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allowedRate,
  interpretValidationResponse,
  requestValidation,
  type ValidationOutcome,
  type ValidationTransport,
} from '../../../functions/core/webhooks/validation-handshake.js';
import { validationTransport } from '../../../functions/net/validation-transport.js';
import { createSafeHttpClient } from '../../../functions/net/safe-http-client.js';
import { recordingLog } from '../../support/recording-log.js';

/** A real HTTP target; each path answers the OPTIONS request its own way. */
const behaviours: Record<string, (res: ServerResponse) => void> = {
  '/consents': (res) =>
    res
      .writeHead(200, {
        'webhook-allowed-origin': 'koerier.test',
        'webhook-allowed-rate': '120',
        allow: 'POST, OPTIONS',
      })
      .end(),
  '/consents-to-all': (res) => res.writeHead(204, { 'webhook-allowed-origin': '*', 'webhook-allowed-rate': '*' }).end(),
  '/consents-silently-on-rate': (res) => res.writeHead(200, { 'webhook-allowed-origin': 'KOERIER.TEST' }).end(),
  '/takes-batches': (res) =>
    res
      .writeHead(200, {
        'webhook-allowed-origin': 'koerier.test',
        'accept-post': 'application/cloudevents+json, application/cloudevents-batch+json; charset=utf-8',
      })
      .end(),
  '/other-origin': (res) => res.writeHead(200, { 'webhook-allowed-origin': 'someone-else.example' }).end(),
  '/refuses': (res) => res.writeHead(403).end(),
  '/no-options': (res) => res.writeHead(405, { allow: 'POST' }).end(),
  '/withholds': (res) => res.writeHead(200, { allow: 'POST, OPTIONS' }).end(),
  '/redirects': (res) => res.writeHead(302, { location: 'https://elsewhere.example/' }).end(),
  '/broken': (res) => res.writeHead(503).end(),
  '/switches': (res) => res.writeHead(101, { 'webhook-allowed-origin': 'koerier.test' }).end(),
  '/ignores': () => undefined,
};

let server: Server;
let base: string;
const received: { path: string; method: string; headers: IncomingHttpHeaders }[] = [];
const client = createSafeHttpClient({ allowLoopback: true, responseTimeoutMs: 300 });
const send = validationTransport(client);

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push({ path: req.url ?? '', method: req.method ?? '', headers: req.headers });
    behaviours[req.url ?? '']?.(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const validate = (path: string, extra: { requestedRatePerMinute?: number } = {}): Promise<ValidationOutcome> =>
  requestValidation(
    {
      sink: `${base}${path}`,
      origin: 'koerier.test',
      callbackUrl: 'https://koerier.test/subscriptions/1/validation?token=t',
      ...extra,
    },
    send,
  );

describe('webhook validation request (sending side)', () => {
  it('WH-4: sends OPTIONS with WebHook-Request-Origin, -Callback and -Rate; a matching WebHook-Allowed-Origin is consent at the allowed rate', async () => {
    const outcome = await validate('/consents', { requestedRatePerMinute: 60 });
    expect(outcome).toMatchObject({ verdict: 'consented', allowedRatePerMinute: 120, batchSupported: false });
    const request = received.find((r) => r.path === '/consents')!;
    expect(request.method).toBe('OPTIONS');
    expect(request.headers['webhook-request-origin']).toBe('koerier.test');
    expect(request.headers['webhook-request-callback']).toBe('https://koerier.test/subscriptions/1/validation?token=t');
    expect(request.headers['webhook-request-rate']).toBe('60');
  });

  it('WH-6: `*` as origin and as rate is consent without a rate limit; a missing rate holds the target to the rate asked for', async () => {
    expect(await validate('/consents-to-all')).toEqual(expect.objectContaining({ verdict: 'consented' }));
    expect(await validate('/consents-to-all')).not.toHaveProperty('allowedRatePerMinute');
    expect(await validate('/consents-silently-on-rate', { requestedRatePerMinute: 30 })).toMatchObject({
      verdict: 'consented',
      allowedRatePerMinute: 30,
    });
  });

  it('JSON-3: a target declares batch support with Accept-Post', async () => {
    expect(await validate('/takes-batches')).toMatchObject({ verdict: 'consented', batchSupported: true });
  });

  it('WH-4: consent for another origin, a 403 and a redirect are refusals', async () => {
    expect(await validate('/other-origin')).toMatchObject({
      verdict: 'refused',
      reason: expect.stringContaining('someone-else.example'),
    });
    expect(await validate('/refuses')).toMatchObject({ verdict: 'refused', reason: expect.stringContaining('403') });
    expect(await validate('/redirects')).toMatchObject({ verdict: 'refused', reason: expect.stringContaining('302') });
  });

  it('WH-5: a target answering 405 does not support the handshake: refused', async () => {
    expect(await validate('/no-options')).toMatchObject({
      verdict: 'refused',
      reason: expect.stringContaining('does not support the validation handshake'),
    });
  });

  it('WH-4: a 2xx without WebHook-Allowed-Origin withholds consent for the callback; a 5xx, a 101 or no answer at all leaves it undecided', async () => {
    expect(await validate('/withholds')).toMatchObject({
      verdict: 'undecided',
      reason: expect.stringContaining('callback'),
    });
    expect(await validate('/broken')).toMatchObject({ verdict: 'undecided', reason: expect.stringContaining('503') });
    // Not a final answer, even with the consent header: a 101 decides nothing.
    expect(await validate('/switches')).toMatchObject({ verdict: 'undecided', reason: expect.stringContaining('101') });
    expect(await validate('/ignores')).toMatchObject({
      verdict: 'undecided',
      reason: 'the validation request got no answer (the target could not be reached)',
    });
  });

  it('WH-4: a sink that resolves to an internal address is refused with fixed words that do not reveal the address', async () => {
    const internal = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
      options.all
        ? callback(null, [{ address: '10.1.2.3', family: 4 }])
        : callback(null, '10.1.2.3', 4)) as unknown as LookupFunction;
    const strict = createSafeHttpClient({ allowLoopback: false, lookup: internal, responseTimeoutMs: 300 });
    try {
      const outcome = await requestValidation(
        { sink: 'https://db.internal/hook', origin: 'koerier.test' },
        validationTransport(strict),
      );
      expect(outcome).toEqual({
        verdict: 'refused',
        reason: 'Koerier may not call this sink: the target could not be reached',
      });
      expect(outcome.reason).not.toContain('10.1.2.3');
    } finally {
      await strict.close();
    }
  });

  it('review #19: a closed port and a target that never answers read the same to the subscriber: no port scanning through the handshake', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await requestValidation({ sink: `http://127.0.0.1:${port}/hook`, origin: 'koerier.test' }, send);
    const silent = await validate('/ignores');
    expect(refused).toEqual(silent);
    expect(JSON.stringify(refused)).not.toMatch(
      new RegExp(`ECONNREFUSED|127\\.0\\.0\\.1|timeout|refused|${port}`, 'i'),
    );
  });

  it("review #19: the precise failure goes to the operator log with the sink's origin only; the subscriber reads the merged words", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const log = recordingLog();
    const outcome = await requestValidation(
      { sink: `http://127.0.0.1:${port}/hook?secret=s3cr3t`, origin: 'koerier.test' },
      validationTransport(client, log),
    );
    expect(outcome).toEqual({
      verdict: 'undecided',
      reason: 'the validation request got no answer (the target could not be reached)',
    });
    const logged = log.lines.map(({ message, fields }) => ({ message, fields }));
    expect(logged).toEqual([
      {
        message: 'validation request failed',
        fields: { sinkOrigin: `http://127.0.0.1:${port}`, failure: 'connection-refused', error: expect.any(String) },
      },
    ]);
    expect(JSON.stringify(logged)).not.toContain('s3cr3t');
  });

  it('WH-1: outside the laptop host a loopback or plain-http sink is never called: refused for good', async () => {
    const strict = createSafeHttpClient({ allowLoopback: false, responseTimeoutMs: 300 });
    try {
      const before = received.length;
      expect(
        await requestValidation({ sink: `${base}/consents`, origin: 'koerier.test' }, validationTransport(strict)),
      ).toMatchObject({
        verdict: 'refused',
        reason: expect.stringContaining('may not call'),
      });
      expect(received.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});

describe('reading the answer to the validation request (WH-4, WH-6), without a network', () => {
  const asked = { origin: 'koerier.test', requestedRatePerMinute: 60 };
  const read = (status: number, headers: Record<string, string> = {}) =>
    interpretValidationResponse(status, headers, asked).verdict;

  it('WH-4: WebHook-Request-Rate is sent only when a rate is asked for', async () => {
    const sent: Record<string, string>[] = [];
    const send: ValidationTransport = async ({ headers }) => {
      sent.push({ ...headers });
      return { status: 503, headers: {} };
    };
    await requestValidation({ sink: 'https://target.example/hook', origin: 'koerier.test' }, send);
    expect(sent).toEqual([{ 'webhook-request-origin': 'koerier.test' }]);
  });

  it('WH-4: only a 2xx can consent; a 3xx, 4xx, 405 or 501 carrying WebHook-Allowed-Origin is still refused, a 500 or a 101 undecided', () => {
    const consent = { 'webhook-allowed-origin': 'koerier.test' };
    expect(read(200, consent)).toBe('consented');
    expect(read(299, consent)).toBe('consented');
    // A target that refuses must not turn into consent because it echoes the header anyway.
    for (const status of [300, 302, 403, 404, 405, 499, 501])
      expect(read(status, consent), String(status)).toBe('refused');
    expect(read(500, consent)).toBe('undecided');
    // Node's client hands a bare 101 (no Upgrade headers) over as the answer: not a final one, so no verdict either way.
    expect(read(101, consent)).toBe('undecided');
    expect(read(503, consent)).toBe('undecided');
  });

  it('WH-4: WebHook-Allowed-Origin is compared trimmed; an empty or blank one withholds consent, it does not refuse', () => {
    expect(read(200, { 'webhook-allowed-origin': '  koerier.test ' })).toBe('consented');
    expect(read(200, { 'webhook-allowed-origin': '' })).toBe('undecided');
    expect(read(204, { 'webhook-allowed-origin': '   ' })).toBe('undecided');
  });

  it('WH-6: WebHook-Allowed-Rate: `*` is no limit even when we asked for one; digits (trimmed) are the rate; anything else holds the target to our rate', () => {
    expect(allowedRate('*', 60)).toBeUndefined();
    expect(allowedRate(' * ', 60)).toBeUndefined();
    expect(allowedRate(' 90 ', 60)).toBe(90);
    expect(allowedRate('999999999', 60)).toBe(999_999_999);
    for (const malformed of ['', '0', '007', '-5', 'x5', '5x', '60/min', '1000000000', 'abc', '1.5']) {
      expect(allowedRate(malformed, 60), malformed).toBe(60);
      expect(allowedRate(malformed, undefined), malformed).toBeUndefined();
    }
    expect(
      interpretValidationResponse(200, { 'webhook-allowed-origin': '*', 'webhook-allowed-rate': '*' }, asked),
    ).not.toHaveProperty('allowedRatePerMinute');
  });
});
