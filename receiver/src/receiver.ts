/**
 * The receiver: one framework-neutral function from a request to an answer, doing what every
 * receiver of Koerier's deliveries must, in this order (docs/RECEIVERS.md has the protocol and its
 * test vectors):
 *
 * 1. OPTIONS: the validation handshake (WH-4, WH-5; handshake.ts).
 * 2. POST only (405 otherwise).
 * 3. The bearer token (WH-3; bearer-token.ts): 401 when missing or not accepted.
 * 4. The signature, when configured (RFC 9421; message-signature.ts): 401 when it does not verify.
 * 5. `Idempotency-Key` (EDU-IDEM-18): 400 when missing. A key already handled with the same
 *    content: 200, the handler is not called (EDU-IDEM-15); with other content: 422 (EDU-IDEM-8);
 *    still being handled: 503 with Retry-After (see below).
 * 6. The events (structured, batch or binary; cloudevents.ts): 415 when the body is no CloudEvent.
 * 7. The handler: its answer, 204 by default; a throw is a 500 (Koerier retries). The key is
 *    remembered only after a 2xx, so a failed delivery is handled again on its retry.
 *
 * A key still being handled answers 503 with Retry-After rather than the 409 of EDU-IDEM-18: Koerier
 * retries both, but a 503 also says when to try again and every HTTP sender retries it; after the
 * wait the retry finds the key handled and gets the 200.
 */
import { createHash } from 'node:crypto';
import { bearerTokenOf, tokenVerifier, type TokenCheck } from './bearer-token.js';
import { eventsOf, type CloudEvent, type ContentMode } from './cloudevents.js';
import { DEFAULT_KEY_TTL_SECONDS, memoryDeduplicationStore, type DeduplicationStore } from './deduplication.js';
import { answerHandshake, type HandshakeOptions } from './handshake.js';
import { signatureVerifier, type SignatureOptions } from './message-signature.js';
import {
  bodyBytes,
  emptyAnswer,
  headerRecord,
  problemAnswer,
  type ReceivedRequest,
  type ReceiverAnswer,
} from './messages.js';

/** One delivery as the handler is given it. */
export interface Delivery {
  readonly idempotencyKey: string;
  readonly mode: ContentMode;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  /** Whether its signature was verified (only with `signatures`). */
  readonly signed: boolean;
}

/** What a handler may answer instead of 204: e.g. `{ status: 503, headers: { 'retry-after': '60' } }`. */
export interface HandlerAnswer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface ReceiverOptions {
  /** Called once per delivery (not per attempt) with its events. */
  readonly onEvents: (events: CloudEvent[], delivery: Delivery) => void | HandlerAnswer | Promise<void | HandlerAnswer>;
  /** The validation handshake (WH-4); `false` when validation is agreed out of band (WH-5). */
  readonly handshake: HandshakeOptions | false;
  /** How the bearer token is checked (WH-3): a function, or a JWT against a JWKS. */
  readonly token: TokenCheck;
  /** Require and verify Koerier's RFC 9421 signature (subscriptions with `signdeliveries`). */
  readonly signatures?: SignatureOptions;
  /** Where handled keys are kept; the default is in memory, bounded. `false`: no deduplication. */
  readonly deduplication?: DeduplicationStore | false;
  /** How long a handled key is remembered (default 7 days, EDU-IDEM-7). */
  readonly keyTtlSeconds?: number;
  /** Told of a handler's error, which the answer does not carry (default: console.error). */
  readonly onError?: (error: unknown, delivery: Delivery) => void;
  /** The clock (epoch ms), for tests. */
  readonly now?: () => number;
}

export interface Receiver {
  /** The core: a request in any shape the adapters make. */
  handle(request: ReceivedRequest): Promise<ReceiverAnswer>;
  /** The same for a web-standard Request (Hono, Bun, Deno, workers). */
  fetch(request: Request): Promise<Response>;
}

/** Koerier sends a UUID (EDU-IDEM-6); anything printable up to 255 characters is taken. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function createReceiver(options: ReceiverOptions): Receiver {
  if (options.handshake && options.handshake.rate !== undefined && options.handshake.rate !== '*') {
    const { rate } = options.handshake;
    if (!Number.isInteger(rate) || rate < 1)
      throw new Error('handshake.rate: a whole number of deliveries per minute, or *');
  }
  const now = options.now ?? Date.now;
  const verifyToken = tokenVerifier(options.token);
  const verifySignature = options.signatures ? signatureVerifier(options.signatures) : undefined;
  const store = options.deduplication === false ? undefined : (options.deduplication ?? memoryDeduplicationStore());
  const ttl = options.keyTtlSeconds ?? DEFAULT_KEY_TTL_SECONDS;
  const inFlight = new Set<string>();

  /** Steps 5 to 7 for a key this process has claimed. */
  const handleOnce = async (
    key: string,
    headers: Readonly<Record<string, string>>,
    body: Uint8Array,
  ): Promise<ReceiverAnswer> => {
    const fingerprintKey = `${key}#${fingerprint(headers, body)}`;
    if (store && (await store.seen(key))) {
      if (await store.seen(fingerprintKey))
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ duplicate: true, idempotencyKey: key }),
        };
      return problemAnswer(
        422,
        'key-reused',
        'Idempotency-Key Reused',
        'this Idempotency-Key came before with other content',
      );
    }
    const read = eventsOf(headers, body);
    if ('problem' in read) return problemAnswer(415, 'not-a-cloudevent', 'Unsupported Media Type', read.problem);
    const delivery: Delivery = {
      idempotencyKey: key,
      mode: read.mode,
      headers,
      body,
      signed: verifySignature !== undefined,
    };
    try {
      const answer = await options.onEvents(read.events, delivery);
      const status = answer ? answer.status : 204;
      if (status >= 200 && status < 300 && store) {
        await store.remember(fingerprintKey, ttl);
        await store.remember(key, ttl);
      }
      return answer ? { status, headers: { ...answer.headers }, body: answer.body ?? '' } : emptyAnswer(204);
    } catch (error) {
      // The handler's own error stays here: a receiver's answer body is kept by Koerier and shown to the subscriber.
      (options.onError ?? ((e: unknown) => console.error('koerier receiver: the handler failed', e)))(error, delivery);
      return problemAnswer(
        500,
        'handler-failed',
        'Handler Failed',
        'the delivery could not be handled; it will be retried',
      );
    }
  };

  const handle = async (request: ReceivedRequest): Promise<ReceiverAnswer> => {
    const headers = headerRecord(request.headers);
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS') return answerHandshake(headers, options.handshake);
    if (method !== 'POST') return emptyAnswer(405, { allow: options.handshake === false ? 'POST' : 'POST, OPTIONS' });

    const token = bearerTokenOf(headers['authorization']);
    if (token === undefined || !(await verifyToken(token)))
      return problemAnswer(
        401,
        'invalid-token',
        'Unauthorized',
        token === undefined ? 'the delivery carries no bearer token' : 'the bearer token is not accepted',
        { 'www-authenticate': token === undefined ? 'Bearer' : 'Bearer error="invalid_token"' },
      );

    const body = bodyBytes(request.body);
    if (verifySignature) {
      const refusal = await verifySignature({ method, url: request.url, headers, body }, now());
      if (refusal) return problemAnswer(401, 'invalid-signature', 'Signature Not Accepted', refusal);
    }

    const key = headers['idempotency-key']?.trim();
    if (key === undefined || !IDEMPOTENCY_KEY.test(key))
      return problemAnswer(400, 'idempotency-key', 'Idempotency-Key Required', 'a delivery carries an Idempotency-Key');
    // Claimed before the first await, so two attempts arriving together cannot both pass.
    if (inFlight.has(key))
      return problemAnswer(503, 'in-progress', 'Delivery In Progress', 'this Idempotency-Key is being handled', {
        'retry-after': '5',
      });
    inFlight.add(key);
    try {
      return await handleOnce(key, headers, body);
    } finally {
      inFlight.delete(key);
    }
  };

  return {
    handle,
    async fetch(request) {
      const body = new Uint8Array(await request.arrayBuffer());
      const answer = await handle({ method: request.method, url: request.url, headers: request.headers, body });
      return new Response(answer.body === '' ? null : answer.body, { status: answer.status, headers: answer.headers });
    },
  };
}

/** What makes a delivery the same delivery: its body and, in binary mode, its event's headers. */
function fingerprint(headers: Readonly<Record<string, string>>, body: Uint8Array): string {
  const hash = createHash('sha256');
  for (const name of Object.keys(headers)
    .filter((n) => n.startsWith('ce-') || n === 'content-type')
    .sort())
    hash.update(`${name}:${headers[name]}\n`);
  return hash.update(body).digest('base64url');
}
