/**
 * What one delivery attempt's answer means (WH-2, RFC 9110), decided in one place:
 *
 * - 2xx (the spec names 200, 201, 202, 204): delivered.
 * - 410 Gone: the target is retired; the subscription stops.
 * - 429: throttled; wait at least the Retry-After (seconds or HTTP-date) and slow down.
 * - 408, 409 (the Idempotency-Key still in progress, EDU-IDEM-18), 5xx, and failures without an
 *   answer (timeout, reset, refused connection, DNS, TLS): transient; retried with backoff, and they
 *   count against the target's health. A 503's
 *   Retry-After is honoured as the earliest next attempt, as a 429's.
 * - 3xx: redirects are not followed (a webhook URL must be the webhook); not retried.
 * - 415 and every other 4xx: the target will not take this delivery as it is; not retried.
 * - A sink at a refused address or not an https URL: never retried.
 * - A request Koerier could not build (nothing sent): never retried, and not the target's fault.
 */

import type { ReceiverAnswer } from './receiver-answer.js';

/**
 * How an attempt failed when no usable answer came back: the one list of these kinds, shared by
 * the outbound client (`functions/net/safe-http-client.ts`), the deliveries and the validation
 * handshake. The precise kind is for the operator log only; subscribers see `subscriberFailure`.
 */
export type TransportFailureKind =
  /** No connection, no response or no complete body within the bounds. */
  | 'timeout'
  /** The peer closed or reset the connection mid-exchange. */
  | 'reset'
  /** Nothing listens at the address (ECONNREFUSED). */
  | 'connection-refused'
  /** The name does not resolve (now). */
  | 'dns'
  /** The name resolved to, or the URL names, an address Koerier must not reach. */
  | 'refused-address'
  /** Certificate or handshake failure. */
  | 'tls'
  /** The response body exceeds the bound (the status is known). */
  | 'too-large'
  /** Not a URL Koerier may call: not absolute, not https, credentials in it, a port not allowed. */
  | 'invalid-url'
  /**
   * Koerier could not even build the request (e.g. a header value the HTTP client refuses, such
   * as a Content-Type made from an event's `datacontenttype`): nothing was sent.
   */
  | 'not-sendable'
  /** Anything else on the network path (unreachable network, malformed HTTP). */
  | 'network';

/**
 * What a subscriber is told about a failure without an answer (review item 19): whether a port
 * is closed, filtered or speaks TLS, or whether a name resolves, must not be learnt through
 * Koerier, so every network-level failure is one `target-unreachable`. HTTP statuses stay visible.
 */
export type SubscriberFailureCode = 'target-unreachable' | 'response-too-large' | 'invalid-url' | 'not-sendable';

const UNREACHABLE = { code: 'target-unreachable', detail: 'the target could not be reached' } as const;

/** Fixed words per kind (CE-16): the transport's own message can name an internal address. */
export const SUBSCRIBER_FAILURE: Readonly<
  Record<TransportFailureKind, { readonly code: SubscriberFailureCode; readonly detail: string }>
> = {
  timeout: UNREACHABLE,
  reset: UNREACHABLE,
  'connection-refused': UNREACHABLE,
  dns: UNREACHABLE,
  // Also merged: "resolves to a private address" against "does not resolve" would tell which
  // internal names exist.
  'refused-address': UNREACHABLE,
  tls: UNREACHABLE,
  network: UNREACHABLE,
  'too-large': { code: 'response-too-large', detail: "the target's response was too large to read" },
  'invalid-url': {
    code: 'invalid-url',
    detail: 'the URL is not one Koerier may call: https, an allowed port, no credentials in it (WH-1, WH-3)',
  },
  'not-sendable': {
    code: 'not-sendable',
    detail:
      "Koerier could not build an HTTP request from this delivery (e.g. the event's datacontenttype cannot be a Content-Type header); nothing was sent, and the target is not at fault",
  },
};

export type AttemptResult =
  | {
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
      readonly latencyMs: number;
      /** What of the answer the attempt record keeps (issue 30 item 2). */
      readonly answer?: ReceiverAnswer;
    }
  | {
      readonly failure: TransportFailureKind;
      readonly message: string;
      /** Known when the status line arrived before the failure (`too-large`). */
      readonly status?: number | undefined;
      readonly headers?: Readonly<Record<string, string>> | undefined;
      readonly latencyMs: number;
      /** With the status: the answer's kept headers, and no body (it was not read). */
      readonly answer?: ReceiverAnswer | undefined;
    };

/** Machine-readable reasons, shown with attempts and dead letters. */
export type FailureCode =
  | 'server-error'
  | 'request-timeout'
  /** 409: the target is still handling an earlier attempt with the same Idempotency-Key (EDU-IDEM-18). */
  | 'key-in-progress'
  | 'throttled'
  | 'gone'
  | 'unsupported-media-type'
  | 'rejected'
  | 'redirect'
  /** The sink's credential could not be used: its token endpoint failed, or it does not decrypt. */
  | 'credential'
  /** The event's data could not be read back from the claim check (nothing was sent). */
  | 'claim-check'
  | SubscriberFailureCode;

/** Why a delivery is not tried again, when it is the answer's (or the address's) fault. */
export const REJECTION_CODES = [
  'unsupported-media-type',
  'rejected',
  'redirect',
  'target-unreachable',
  'invalid-url',
  'response-too-large',
  'not-sendable',
] as const;
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

export function judgeAttempt(result: AttemptResult, now: number): Verdict {
  if (!('failure' in result)) return judgeStatus(result.status, result.headers, now);
  const { code, detail } = SUBSCRIBER_FAILURE[result.failure];
  switch (result.failure) {
    case 'too-large':
      // A body too large to read still came with its status line, and that is the answer.
      return result.status === undefined
        ? { kind: 'rejected', code: 'response-too-large', detail }
        : judgeStatus(result.status, result.headers ?? {}, now);
    // `not-sendable` is Koerier's (or the event's) fault, not the target's: never retried, never counted against it.
    case 'refused-address':
    case 'invalid-url':
    case 'not-sendable':
      return { kind: 'rejected', code: code as RejectionCode, detail };
    case 'timeout':
    case 'reset':
    case 'connection-refused':
    case 'dns':
    case 'tls':
    case 'network':
      return { kind: 'failed', code, detail };
  }
}

function judgeStatus(status: number, headers: Readonly<Record<string, string>>, now: number): Verdict {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 410) return { kind: 'gone' };
  if (status === 429) {
    const retryAfterMs = parseRetryAfter(headers['retry-after'], now);
    return retryAfterMs === undefined ? { kind: 'throttled' } : { kind: 'throttled', retryAfterMs };
  }
  if (status === 408)
    return { kind: 'failed', code: 'request-timeout', detail: 'the target answered 408 Request Timeout' };
  // Every delivery carries an Idempotency-Key, and a receiver following the profile answers 409
  // while an earlier attempt with that key is still being handled (EDU-IDEM-18, e.g. one that
  // timed out on Koerier's side): the retry finds it handled. Final, it would dead-letter an event
  // the receiver is processing.
  if (status === 409)
    return {
      kind: 'failed',
      code: 'key-in-progress',
      detail:
        'the target answered 409: it is still handling an earlier attempt with this Idempotency-Key (EDU-IDEM-18)',
    };
  if (status >= 500) {
    // A 503's Retry-After says how long the service expects to be unavailable (RFC 9110 §10.2.3).
    const retryAfterMs = status === 503 ? parseRetryAfter(headers['retry-after'], now) : undefined;
    return {
      kind: 'failed',
      code: 'server-error',
      detail: `the target answered ${status}`,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  if (status >= 300 && status < 400) {
    const location = headers['location'] ? ` to ${headers['location']}` : '';
    return {
      kind: 'rejected',
      code: 'redirect',
      detail: `the target answered ${status}, a redirect${location}; Koerier does not follow redirects: register the final URL`,
    };
  }
  if (status === 415)
    return {
      kind: 'rejected',
      code: 'unsupported-media-type',
      detail: 'the target answered 415: it does not understand the delivery format',
    };
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
