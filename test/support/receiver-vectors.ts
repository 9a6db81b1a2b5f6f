/**
 * The test vectors of docs/RECEIVERS.md (issue 30 item 6), made here from Koerier's own code: each
 * delivery is the request Koerier's attempt sends (`requestWithoutToken`, `withAccessToken`,
 * `deliverySignatureHeaders`, as functions/core/delivery/attempt.ts does), signed with a fixed
 * Ed25519 test key at a fixed time. test/unit/receiver/receiver-vectors.test.ts checks that the
 * document holds exactly what this builds (so a change to what Koerier sends or signs shows up as a
 * stale document) and that the receiver kit answers each as expected.
 *
 * To print them after such a change: `npx tsx test/support/receiver-vectors.ts`.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { DeliveryMessage } from '../../functions/core/delivery-message/delivery-message.js';
import { requestWithoutToken, withAccessToken } from '../../functions/core/delivery/webhook-request.js';
import type { ContentMode } from '../../functions/core/cloudevents/index.js';
import {
  deliverySignatureHeaders,
  signatureBase,
  type SigningKey,
} from '../../functions/core/signatures/message-signature.js';

/** TEST ONLY, published on purpose: the private half of the vectors' signing key. Never a key of any deployment. */
export const TEST_PRIVATE_JWK = {
  kty: 'OKP',
  crv: 'Ed25519',
  d: 'ZYZXGK6Hl8uRgh8SILazavsaDYBOfg6gf892peoPH8E',
  x: 'zIwzRMKmgteT9Dm_4-kmXoDWY6is27HJx-kcEH3tf4s',
  kid: 'kZkcSHexrPgXviRUD9NkTEQxhqW7sBS16mhcZjm_sRo',
} as const;

export interface VectorRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface Vector {
  readonly name: string;
  readonly says: string;
  readonly request: VectorRequest;
  readonly expect: {
    readonly status: number;
    /** Headers the answer carries, with these values (names lower-case). */
    readonly headers?: Record<string, string>;
    /** Headers the answer must not carry. */
    readonly absentHeaders?: readonly string[];
    /** The event ids handed to the application, in order; [] when it is not called. */
    readonly handled: readonly string[];
  };
}

export interface VectorSet {
  /** How the receiver under test is set up. */
  readonly receiver: {
    readonly origins: readonly string[];
    readonly rate: number;
    /** The one bearer token it accepts. */
    readonly token: string;
    /** Koerier's key directory as the receiver reads it. */
    readonly keys: { readonly keys: readonly Record<string, string>[] };
    /** The receiver's clock, epoch seconds, for every vector. */
    readonly now: number;
    /** Signatures older than this many seconds (by `created`) are refused. */
    readonly maxAgeSeconds: number;
  };
  readonly vectors: readonly Vector[];
  /** The signature base of the `structured` vector, RFC 9421 §2.5, as Koerier signed it. */
  readonly structuredSignatureBase: string;
}

const ORIGIN = 'koerier.example.org';
const SINK = 'https://ontvanger.example.org/koerier/hook?tenant=42';
const TOKEN = 'vector-test-token-3f9a';
const NOW = 1_764_417_600; // 2025-11-29T12:00:00Z
const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';
const KEYS = {
  structured: '0b6f3c1e-8f9a-4d2b-9c41-5a7e2d1f0c01',
  binary: '0b6f3c1e-8f9a-4d2b-9c41-5a7e2d1f0c02',
  batch: '0b6f3c1e-8f9a-4d2b-9c41-5a7e2d1f0c03',
};

const event = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    specversion: '1.0',
    id,
    source: SOURCE,
    type: 'nl.edu.leerling.ingeschreven.v1',
    time: '2025-11-29T11:59:00Z',
    datacontenttype: 'application/json',
    ...extra,
    data: { leerling: 'L-42', school: '01AB' },
  });

function testSigningKey(): SigningKey {
  const privateKey = createPrivateKey({ key: { ...TEST_PRIVATE_JWK }, format: 'jwk' });
  return {
    keyId: TEST_PRIVATE_JWK.kid,
    algorithm: 'ed25519',
    sign: async (data) => new Uint8Array(sign(null, data, privateKey)),
  };
}

/** The request Koerier sends for a delivery of `events` in `format`, signed at `created` (epoch seconds). */
async function koerierDelivery(
  format: ContentMode,
  events: readonly string[],
  deliveryId: string,
  created: number,
): Promise<VectorRequest> {
  const message: DeliveryMessage = {
    version: 1,
    deliveryId,
    subscriptionId: 'vectors',
    events,
    createdAt: created * 1000,
  };
  const request = withAccessToken(requestWithoutToken({ message, sink: SINK, format, origin: ORIGIN }), TOKEN);
  const signed = await deliverySignatureHeaders(
    { method: 'POST', ...request },
    testSigningKey(),
    new Date(created * 1000),
  );
  return { method: 'POST', url: SINK, headers: { ...request.headers, ...signed }, body: request.body.toString('utf8') };
}

const without = (headers: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));

export async function buildVectors(): Promise<VectorSet> {
  const id = (n: number) => `a1e5b7c0-0000-4000-8000-00000000000${n}`;
  const structured = await koerierDelivery('structured', [event(id(1))], KEYS.structured, NOW - 2);
  const binary = await koerierDelivery('binary', [event(id(2), { subject: 'leerling/L-42' })], KEYS.binary, NOW - 2);
  const batch = await koerierDelivery('batch', [event(id(3)), event(id(4))], KEYS.batch, NOW - 2);
  const otherContent = await koerierDelivery('structured', [event(id(5))], KEYS.structured, NOW - 1);
  const old = await koerierDelivery('structured', [event(id(6))], '0b6f3c1e-8f9a-4d2b-9c41-5a7e2d1f0c06', NOW - 600);
  const handshake = (origin: string): VectorRequest => ({
    method: 'OPTIONS',
    url: SINK,
    headers: {
      'webhook-request-origin': origin,
      'webhook-request-callback': 'https://koerier.example.org/v1/subscriptions/validate?token=abc',
      'webhook-request-rate': '120',
    },
    body: '',
  });
  const vectors: Vector[] = [
    {
      name: 'handshake',
      says: 'WH-4: the validation request from an allowed origin gets consent: that origin and the allowed rate.',
      request: handshake(ORIGIN),
      expect: {
        status: 200,
        headers: { 'webhook-allowed-origin': ORIGIN, 'webhook-allowed-rate': '120' },
        handled: [],
      },
    },
    {
      name: 'handshake-other-origin',
      says: 'WH-4: from an origin the receiver does not know, no consent (a 4xx without WebHook-Allowed-Origin; Koerier reads it as refused).',
      request: handshake('elders.example.net'),
      expect: { status: 403, absentHeaders: ['webhook-allowed-origin'], handled: [] },
    },
    {
      name: 'no-token',
      says: 'WH-3: a delivery without a bearer token is refused 401, before anything else is looked at.',
      request: { ...structured, headers: without(structured.headers, 'authorization') },
      expect: { status: 401, handled: [] },
    },
    {
      name: 'wrong-token',
      says: 'WH-3: a delivery with a token the receiver does not accept is refused 401.',
      request: { ...structured, headers: { ...structured.headers, authorization: 'Bearer not-the-token' } },
      expect: { status: 401, handled: [] },
    },
    {
      name: 'tampered-body',
      says: 'RFC 9530: a body whose sha-256 is not the Content-Digest is refused 401.',
      request: { ...structured, body: structured.body.replace('L-42', 'L-43') },
      expect: { status: 401, handled: [] },
    },
    {
      name: 'tampered-key',
      says: 'RFC 9421: another Idempotency-Key than the one signed is refused 401.',
      request: {
        ...structured,
        headers: { ...structured.headers, 'idempotency-key': '0b6f3c1e-8f9a-4d2b-9c41-5a7e2d1f0c99' },
      },
      expect: { status: 401, handled: [] },
    },
    {
      name: 'expired-signature',
      says: `RFC 9421: a signature created more than ${300} s before the receiver's clock is refused 401 (Koerier signs each attempt afresh).`,
      request: old,
      expect: { status: 401, handled: [] },
    },
    {
      name: 'structured',
      says: 'A signed structured delivery (application/cloudevents+json) is handled: 204 (any 2xx).',
      request: structured,
      expect: { status: 204, handled: [id(1)] },
    },
    {
      name: 'duplicate',
      says: 'EDU-IDEM-15: the same delivery again (a retry: same Idempotency-Key, same body, signed afresh or not) is answered 2xx and not handled again.',
      request: structured,
      expect: { status: 200, handled: [] },
    },
    {
      name: 'same-key-other-content',
      says: 'EDU-IDEM-8: a known Idempotency-Key with other content is refused 422 (Koerier never sends one; EDU-IDEM-11).',
      request: otherContent,
      expect: { status: 422, handled: [] },
    },
    {
      name: 'binary',
      says: 'A signed binary-mode delivery: the attributes in ce- headers (all signed), the data as the body.',
      request: binary,
      expect: { status: 204, handled: [id(2)] },
    },
    {
      name: 'binary-added-header',
      says: 'RFC 9421: a ce- header the signature does not cover (here one added) is refused 401.',
      request: {
        ...binary,
        headers: { ...binary.headers, 'ce-traceparent': '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      },
      expect: { status: 401, handled: [] },
    },
    {
      name: 'batch',
      says: 'A signed batch (application/cloudevents-batch+json): every event is handled, once.',
      request: batch,
      expect: { status: 204, handled: [id(3), id(4)] },
    },
  ];
  return {
    receiver: {
      origins: [ORIGIN],
      rate: 120,
      token: TOKEN,
      keys: {
        keys: [
          { kty: 'OKP', crv: 'Ed25519', x: TEST_PRIVATE_JWK.x, kid: TEST_PRIVATE_JWK.kid, use: 'sig', alg: 'EdDSA' },
        ],
      },
      now: NOW,
      maxAgeSeconds: 300,
    },
    vectors,
    structuredSignatureBase: signatureBaseOf(structured),
  };
}

/** The base a receiver rebuilds from `request` and its Signature-Input (RFC 9421 §2.5), with Koerier's own function. */
function signatureBaseOf(request: VectorRequest): string {
  const input = request.headers['signature-input']!;
  const list = /\(([^)]*)\)/.exec(input)![1]!;
  const covered = [...list.matchAll(/"([^"]+)"/g)].map((match) => match[1]!);
  const created = Number(/;created=(\d+)/.exec(input)![1]);
  const keyid = /;keyid="([^"]+)"/.exec(input)![1]!;
  return signatureBase(request, covered, { created, keyid, alg: 'ed25519' });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${JSON.stringify(await buildVectors(), null, 2)}\n`);
}
