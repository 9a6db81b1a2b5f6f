/**
 * What one delivery attempt's answer means (WH-2, RFC 9110), decided in one place:
 *
 * - 2xx (the spec names 200, 201, 202, 204): delivered.
 * - 410 Gone: the target is retired; the subscription stops.
 * - 429: throttled; wait at least the Retry-After (seconds or HTTP-date) and slow down.
 * - 408, 5xx, and failures without an answer (timeout, reset, refused connection, DNS, TLS):
 *   transient; retried with backoff, and they count against the target's health. A 503's
 *   Retry-After is honoured as the earliest next attempt, as a 429's.
 * - 3xx: redirects are not followed (a webhook URL must be the webhook); not retried.
 * - 415 and every other 4xx: the target will not take this delivery as it is; not retried.
 * - A sink at a refused address or not an https URL: never retried.
 */

/** How an attempt failed when no usable answer came back (see functions/net/safe-http-client.ts). */
export type TransportFailureKind = 'timeout' | 'reset' | 'connection-refused' | 'dns' | 'refused-address' | 'tls' | 'too-large' | 'invalid-url' | 'network';

export type AttemptResult =
  | { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly latencyMs: number }
  | {
      readonly failure: TransportFailureKind;
      readonly message: string;
      /** Known when the status line arrived before the failure (`too-large`). */
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly latencyMs: number;
    };

/** Machine-readable reasons, shown with attempts and dead letters. */
export type FailureCode =
  | 'server-error'
  | 'request-timeout'
  | 'throttled'
  | 'gone'
  | 'unsupported-media-type'
  | 'rejected'
  | 'redirect'
  /** The sink's credential could not be used: its token endpoint failed, or it does not decrypt. */
  | 'credential'
  | TransportFailureKind;

/** Why a delivery is not tried again, when it is the answer's (or the address's) fault. */
export const REJECTION_CODES = ['unsupported-media-type', 'rejected', 'redirect', 'refused-address', 'invalid-url', 'too-large'] as const;
export type RejectionCode = (typeof REJECTION_CODES)[number];

export type Verdict =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'gone' }
  | { readonly kind: 'throttled'; readonly retryAfterMs?: number }
  /** Transient: retry, and count it against the target's health (circuit breaker, suspension);
   * not before `retryAfterMs` when a 503 said so. */
  | { readonly kind: 'failed'; readonly code: FailureCode; readonly detail: string; readonly retryAfterMs?: number }
  /** Permanent for this delivery: to the dead letters without further attempts. */
  | { readonly kind: 'rejected'; readonly code: RejectionCode; readonly detail: string };

/**
 * The words a failure without an answer gets in attempt and dead-letter records, which the
 * subscriber reads (CE-16). Fixed per kind: the transport's own message can name the address a
 * sink resolved to, inside Koerier's network; it goes to the operator log only.
 */
export const TRANSPORT_FAILURE_DETAIL: Readonly<Record<TransportFailureKind, string>> = {
  timeout: 'no complete response from the target in time',
  reset: 'the connection to the target was reset',
  'connection-refused': 'the target refused the connection',
  dns: "the sink's host name did not resolve",
  'refused-address': 'the sink resolves to an address Koerier may not call',
  tls: 'the TLS connection to the target failed (certificate or protocol)',
  'too-large': "the target's response was too large to read",
  'invalid-url': 'the sink is not a URL Koerier may call: https, without credentials in it (WH-1, WH-3)',
  network: 'the request to the target failed',
};

export function judgeAttempt(result: AttemptResult, now: number): Verdict {
  if (!('failure' in result)) return judgeStatus(result.status, result.headers, now);
  const detail = TRANSPORT_FAILURE_DETAIL[result.failure];
  switch (result.failure) {
    case 'too-large':
      // A body too large to read still came with its status line, and that is the answer.
      return result.status === undefined ? { kind: 'rejected', code: 'too-large', detail } : judgeStatus(result.status, result.headers ?? {}, now);
    case 'refused-address':
    case 'invalid-url':
      return { kind: 'rejected', code: result.failure, detail };
    default:
      return { kind: 'failed', code: result.failure, detail };
  }
}

function judgeStatus(status: number, headers: Readonly<Record<string, string>>, now: number): Verdict {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 410) return { kind: 'gone' };
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(headers['retry-after'], now);
    return retryAfterMs === undefined ? { kind: 'throttled' } : { kind: 'throttled', retryAfterMs };
  }
  if (status === 408) return { kind: 'failed', code: 'request-timeout', detail: 'the target answered 408 Request Timeout' };
  if (status >= 500) {
    // A 503's Retry-After says how long the service expects to be unavailable (RFC 9110 §10.2.3).
    const retryAfterMs = status === 503 ? parseRetryAfter(headers['retry-after'], now) : undefined;
    return { kind: 'failed', code: 'server-error', detail: `the target answered ${status}`, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }
  if (status >= 300 && status < 400) {
    const location = headers['location'] ? ` to ${headers['location']}` : '';
    return { kind: 'rejected', code: 'redirect', detail: `the target answered ${status}, a redirect${location}; Koerier does not follow redirects: register the final URL` };
  }
  if (status === 415) return { kind: 'rejected', code: 'unsupported-media-type', detail: 'the target answered 415: it does not understand the delivery format' };
  return { kind: 'rejected', code: 'rejected', detail: `the target answered ${status}` };
}

const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$/;

/**
 * Retry-After (RFC 9110 §10.2.3) as milliseconds from `now`: delay-seconds or an HTTP-date.
 * Undefined when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Math.min(Number(text), 365 * 24 * 3600) * 1000;
  // IMF-fixdate, and the obsolete RFC 850 and asctime forms Date.parse also reads; asctime
  // names no zone but means GMT.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(ASCTIME.test(text) ? `${text} GMT` : text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
