/**
 * judgeAttempt and parseRetryAfter at their boundaries: which status ranges mean what, which
 * statuses' Retry-After count, and the words a subscriber sees. Written where `npm run mutate`
 * showed boundaries no test pinned (docs/MUTATION.md).
 */
import { describe, expect, it } from 'vitest';
import { judgeAttempt, parseRetryAfter } from '../../../functions/core/delivery/attempt-outcome.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const status = (code: number, headers: Record<string, string> = {}) =>
  judgeAttempt({ status: code, headers, latencyMs: 5 }, NOW);

describe('what an answer means (WH-2)', () => {
  it('WH-2: 200 to 299 is delivered; 199 and 300 are not', () => {
    expect(status(200)).toEqual({ kind: 'delivered' });
    expect(status(299)).toEqual({ kind: 'delivered' });
    expect(status(199)).toEqual({ kind: 'rejected', code: 'rejected', detail: 'the target answered 199' });
    expect(status(300).kind).not.toBe('delivered');
  });

  it('WH-2: 300 to 399 is a redirect Koerier does not follow, naming where it pointed', () => {
    expect(status(300, { location: 'https://elders.example/' })).toEqual({
      kind: 'rejected',
      code: 'redirect',
      detail:
        'the target answered 300, a redirect to https://elders.example/; Koerier does not follow redirects: register the final URL',
    });
    expect(status(399)).toEqual({
      kind: 'rejected',
      code: 'redirect',
      detail: 'the target answered 399, a redirect; Koerier does not follow redirects: register the final URL',
    });
    expect(status(400)).toEqual({ kind: 'rejected', code: 'rejected', detail: 'the target answered 400' });
  });

  it('WH-2: 408 is a transient failure in its own words; 415 a rejection in its own', () => {
    expect(status(408)).toEqual({
      kind: 'failed',
      code: 'request-timeout',
      detail: 'the target answered 408 Request Timeout',
    });
    expect(status(415)).toEqual({
      kind: 'rejected',
      code: 'unsupported-media-type',
      detail: 'the target answered 415: it does not understand the delivery format',
    });
  });

  it('WH-2: a 429 without a readable Retry-After carries no wait at all', () => {
    expect(status(429)).toStrictEqual({ kind: 'throttled' });
    expect(status(429, { 'retry-after': '7' })).toStrictEqual({ kind: 'throttled', retryAfterMs: 7000 });
  });

  it("WH-2: only a 503's Retry-After sets the next attempt of a 5xx", () => {
    expect(status(500, { 'retry-after': '10' })).toStrictEqual({
      kind: 'failed',
      code: 'server-error',
      detail: 'the target answered 500',
    });
    expect(status(503, { 'retry-after': '10' })).toStrictEqual({
      kind: 'failed',
      code: 'server-error',
      detail: 'the target answered 503',
      retryAfterMs: 10_000,
    });
  });

  it('WH-2: a response too large to read is judged by its status when that arrived, else rejected as too large', () => {
    expect(judgeAttempt({ failure: 'too-large', message: 'body over 1 MiB', latencyMs: 5 }, NOW)).toEqual({
      kind: 'rejected',
      code: 'response-too-large',
      detail: "the target's response was too large to read",
    });
    expect(judgeAttempt({ failure: 'too-large', message: 'body over 1 MiB', status: 204, latencyMs: 5 }, NOW)).toEqual({
      kind: 'delivered',
    });
  });
});

describe('Retry-After (RFC 9110 §10.2.3)', () => {
  it('WH-2: delay-seconds are capped at a year', () => {
    expect(parseRetryAfter('1000000000', NOW)).toBe(365 * 24 * 3600 * 1000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
  });

  it('WH-2: an HTTP-date must start with its day name; anything else is unreadable', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('01 Mar 2026 12:00:30 GMT', NOW)).toBeUndefined();
    expect(parseRetryAfter('S, 01 Mar 2026 12:00:30 GMT', NOW)).toBeUndefined();
    expect(parseRetryAfter('Sun Mar  1 12:00:30 2026', NOW)).toBe(30_000);
    expect(parseRetryAfter('', NOW)).toBeUndefined();
  });
});
