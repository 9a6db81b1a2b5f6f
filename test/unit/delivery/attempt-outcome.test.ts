import { describe, expect, it } from 'vitest';
import { judgeAttempt, parseRetryAfter } from '../../../functions/core/delivery/attempt-outcome.js';

const answer = (status: number, headers: Record<string, string> = {}) =>
  judgeAttempt({ status, headers, latencyMs: 5 }, Date.parse('2026-01-01T00:00:00Z'));

describe('reading a delivery answer', () => {
  it.each([200, 201, 202, 204])('WH-2: %i means delivered', (status) => {
    expect(answer(status)).toEqual({ kind: 'delivered' });
  });

  it('WH-2: 410 Gone retires the target', () => {
    expect(answer(410)).toEqual({ kind: 'gone' });
  });

  it('WH-2: 429 carries the Retry-After in seconds or as an HTTP-date', () => {
    expect(answer(429, { 'retry-after': '7' })).toEqual({ kind: 'throttled', retryAfterMs: 7000 });
    expect(answer(429, { 'retry-after': 'Thu, 01 Jan 2026 00:02:00 GMT' })).toEqual({
      kind: 'throttled',
      retryAfterMs: 120_000,
    });
    expect(answer(429)).toEqual({ kind: 'throttled' });
  });

  it('WH-2: 415 means the format is not understood: not retried', () => {
    expect(answer(415)).toMatchObject({ kind: 'rejected', code: 'unsupported-media-type' });
  });

  it.each([400, 401, 403, 404, 405, 413, 422])('WH-2: %i is a permanent rejection', (status) => {
    expect(answer(status)).toMatchObject({ kind: 'rejected', code: 'rejected' });
  });

  it('EDU-IDEM-18: a 409 (the Idempotency-Key still in progress at the target) is transient and retried, not a dead letter', () => {
    expect(answer(409)).toMatchObject({ kind: 'failed', code: 'key-in-progress' });
  });

  it.each([408, 500, 502, 503, 504])('WH-2: %i is transient and retried', (status) => {
    expect(answer(status)).toMatchObject({ kind: 'failed' });
  });

  it.each([301, 302, 303, 307, 308])('WH-2: a %i redirect is not followed and not retried', (status) => {
    expect(answer(status, { location: 'https://elsewhere.example/' })).toMatchObject({
      kind: 'rejected',
      code: 'redirect',
      detail: expect.stringContaining('https://elsewhere.example/'),
    });
  });

  it.each(['timeout', 'reset', 'connection-refused', 'dns', 'tls', 'network'] as const)(
    'WH-2: a %s failure is transient',
    (failure) => {
      expect(judgeAttempt({ failure, message: 'x', latencyMs: 1 }, 0)).toMatchObject({
        kind: 'failed',
        code: 'target-unreachable',
      });
    },
  );

  it.each([
    ['refused-address', 'target-unreachable'],
    ['invalid-url', 'invalid-url'],
  ] as const)('SSRF: a %s failure is never retried', (failure, code) => {
    expect(judgeAttempt({ failure, message: 'x', latencyMs: 1 }, 0)).toMatchObject({ kind: 'rejected', code });
  });

  it('review #19: refused, DNS, TLS, timeout, reset and a refused address all read the same to the subscriber', () => {
    const seen = new Set(
      (['timeout', 'reset', 'connection-refused', 'dns', 'tls', 'network', 'refused-address'] as const).map(
        (failure) => {
          const verdict = judgeAttempt(
            { failure, message: `connect ECONNREFUSED 93.184.216.34:${failure.length}`, latencyMs: 1 },
            0,
          );
          return 'detail' in verdict ? `${verdict.code}|${verdict.detail}` : '';
        },
      ),
    );
    expect([...seen]).toEqual(['target-unreachable|the target could not be reached']);
  });

  it('review #8: a request Koerier could not build is rejected, not a failure counted against the target', () => {
    expect(
      judgeAttempt({ failure: 'not-sendable', message: 'invalid content-type header', latencyMs: 0 }, 0),
    ).toMatchObject({
      kind: 'rejected',
      code: 'not-sendable',
    });
  });

  it('WH-2: a 503 with Retry-After is transient and carries the wait (RFC 9110 §10.2.3)', () => {
    expect(judgeAttempt({ status: 503, headers: { 'retry-after': '90' }, latencyMs: 1 }, 0)).toEqual({
      kind: 'failed',
      code: 'server-error',
      detail: 'the target answered 503',
      retryAfterMs: 90_000,
    });
    expect(judgeAttempt({ status: 503, headers: {}, latencyMs: 1 }, 0)).not.toHaveProperty('retryAfterMs');
  });

  it('CE-16: a failure without an answer is recorded in fixed words, never the transport message naming an internal address', () => {
    const message = 'hook.example resolves to 10.0.0.7: the address 10.0.0.7 is private; Koerier does not call it';
    const verdict = judgeAttempt({ failure: 'refused-address', message, latencyMs: 1 }, 0);
    expect(verdict).toEqual({
      kind: 'rejected',
      code: 'target-unreachable',
      detail: 'the target could not be reached',
    });
    for (const failure of ['invalid-url', 'connection-refused', 'timeout', 'network'] as const) {
      expect(JSON.stringify(judgeAttempt({ failure, message, latencyMs: 1 }, 0))).not.toContain('10.0.0.7');
    }
  });

  it('an answer too large to read still counts by its status line', () => {
    expect(judgeAttempt({ failure: 'too-large', message: 'x', status: 200, latencyMs: 1 }, 0)).toEqual({
      kind: 'delivered',
    });
    expect(judgeAttempt({ failure: 'too-large', message: 'x', status: 503, latencyMs: 1 }, 0)).toMatchObject({
      kind: 'failed',
    });
  });

  it('WH-2: a 429 too large to read still has its Retry-After honoured', () => {
    expect(
      judgeAttempt(
        { failure: 'too-large', message: 'x', status: 429, headers: { 'retry-after': '3600' }, latencyMs: 1 },
        0,
      ),
    ).toEqual({
      kind: 'throttled',
      retryAfterMs: 3_600_000,
    });
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('WH-2: reads delay-seconds, the IMF-fixdate and the obsolete date forms', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thursday, 01-Jan-26 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thu Jan  1 00:00:30 2026', now)).toBe(30_000);
  });

  it('WH-2: a date in the past means now; nonsense means no Retry-After', () => {
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('2026-01-01', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
