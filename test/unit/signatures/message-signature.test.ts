/**
 * The pure core of signed deliveries (issue 12, item 6), against the examples of RFC 9421
 * (HTTP Message Signatures) and RFC 9530 (Digest Fields): the signature base, the
 * `@signature-params` serialisation, derived components, and the Content-Digest. Ed25519 is
 * deterministic, so the RFC's own signature value is reproduced byte for byte.
 */
import { createPrivateKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { createVerifier, httpbis } from 'http-message-signatures';
import { describe, expect, it } from 'vitest';
import {
  componentValue,
  contentDigest,
  DELIVERY_COMPONENTS,
  deliveryComponents,
  deliverySignatureHeaders,
  signatureBase,
  signatureParams,
  type SigningKey,
} from '../../../functions/core/signatures/message-signature.js';

/** RFC 9421 Appendix B.1.4, test-key-ed25519. */
const RFC_ED25519_PRIVATE = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----`;

/** RFC 9421 Appendix B.2: the example request. */
const RFC_REQUEST = {
  method: 'POST',
  url: 'https://example.com/foo?param=Value&Pet=dog',
  headers: {
    Host: 'example.com',
    Date: 'Tue, 20 Apr 2021 02:07:55 GMT',
    'Content-Type': 'application/json',
    'Content-Digest':
      'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
    'Content-Length': '18',
  },
};

describe('RFC 9421 signature base (issue 12, item 6)', () => {
  it("issue 12 #6: B.2.6 (ed25519): the signature base and the signature value are the RFC's, byte for byte", () => {
    const components = ['date', '@method', '@path', '@authority', 'content-type', 'content-length'];
    const base = signatureBase(RFC_REQUEST, components, { created: 1618884473, keyid: 'test-key-ed25519' });
    expect(base).toBe(
      [
        '"date": Tue, 20 Apr 2021 02:07:55 GMT',
        '"@method": POST',
        '"@path": /foo',
        '"@authority": example.com',
        '"content-type": application/json',
        '"content-length": 18',
        '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
      ].join('\n'),
    );
    const signature = sign(null, Buffer.from(base), createPrivateKey(RFC_ED25519_PRIVATE)).toString('base64');
    expect(signature).toBe('wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==');
  });

  it('issue 12 #6: §2.2 derived components: @target-uri, @authority (lower case, port kept), @path, @query (empty is "?")', () => {
    const request = { method: 'post', url: 'https://www.example.com/path?param=value', headers: {} };
    expect(componentValue(request, '@method')).toBe('POST');
    expect(componentValue(request, '@target-uri')).toBe('https://www.example.com/path?param=value');
    expect(componentValue(request, '@query')).toBe('?param=value');
    expect(componentValue({ ...request, url: 'https://Example.COM:8443/' }, '@authority')).toBe('example.com:8443');
    expect(componentValue({ ...request, url: 'https://example.com/a' }, '@query')).toBe('?');
    expect(componentValue({ ...request, url: 'https://example.com' }, '@path')).toBe('/');
  });

  it('issue 12 #6: §2.1 a header value is found whatever the case of its name and trimmed; an absent covered header is never signed', () => {
    const request = { method: 'POST', url: 'https://example.com/', headers: { 'Idempotency-Key': '  abc ' } };
    expect(componentValue(request, 'idempotency-key')).toBe('abc');
    expect(() => componentValue(request, 'content-digest')).toThrow(/not in the request/);
    expect(() => componentValue(request, '@request-target')).toThrow(/not supported/);
  });

  it('issue 12 #6: §2.3 @signature-params: created, expires, nonce, keyid, alg, tag in that order; strings escaped', () => {
    expect(
      signatureParams(['@method'], { created: 1, expires: 2, nonce: 'n', keyid: 'k"\\', alg: 'ed25519', tag: 't' }),
    ).toBe('("@method");created=1;expires=2;nonce="n";keyid="k\\"\\\\";alg="ed25519";tag="t"');
    expect(() => signatureParams(['@method'], { created: 1.5, keyid: 'k' })).toThrow(/integer/);
    expect(() => signatureParams(['@method'], { created: 1, keyid: 'ключ' })).toThrow(/ASCII/);
  });
});

describe('RFC 9530 Content-Digest (issue 12, item 6)', () => {
  it('issue 12 #6: sha-256 of {"hello": "world"} is the RFC 9530 example value', () => {
    expect(contentDigest('{"hello": "world"}')).toBe('sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:');
    expect(contentDigest(Buffer.from('{"hello": "world"}'))).toBe(
      'sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:',
    );
  });
});

describe('the headers of a signed delivery (issue 12, item 6)', () => {
  const request = {
    method: 'POST',
    url: 'https://receiver.example/hook?x=1',
    headers: {
      'content-type': 'application/cloudevents+json',
      'idempotency-key': '5b7e0f4e-2a36-4d67-9a59-6a1a3f3c2f10',
    },
    body: Buffer.from('{"specversion":"1.0"}'),
  };

  it('issue 12 #6, issue 28 #11: covers @method, @target-uri, idempotency-key, content-digest and content-type with created, keyid and alg; the signature verifies over that base', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const key: SigningKey = {
      keyId: 'kid-1',
      algorithm: 'ed25519',
      sign: async (data) => sign(null, data, privateKey),
    };
    const headers = await deliverySignatureHeaders(request, key, new Date(1_700_000_000_500));
    expect(headers['content-digest']).toBe(contentDigest(request.body));
    expect(headers['signature-input']).toBe(
      'koerier=("@method" "@target-uri" "idempotency-key" "content-digest" "content-type");created=1700000000;keyid="kid-1";alg="ed25519"',
    );
    const signature = Buffer.from(/^koerier=:(.+):$/.exec(headers['signature']!)![1]!, 'base64');
    const base = signatureBase(
      { ...request, headers: { ...request.headers, ...headers } },
      [...DELIVERY_COMPONENTS, 'content-type'],
      {
        created: 1700000000,
        keyid: 'kid-1',
        alg: 'ed25519',
      },
    );
    expect(base.split('\n')[1]).toBe('"@target-uri": https://receiver.example/hook?x=1');
    expect(verify(null, Buffer.from(base), publicKey, signature)).toBe(true);
    // A body changed on the way no longer matches the signed digest.
    expect(contentDigest('{"specversion":"1.1"}')).not.toBe(headers['content-digest']);
  });

  it('issue 12 #6: ecdsa-p256-sha256 signatures are r‖s (64 bytes), as RFC 9421 §3.3.4 requires', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key: SigningKey = {
      keyId: 'kid-ec',
      algorithm: 'ecdsa-p256-sha256',
      sign: async (data) => sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
    };
    const headers = await deliverySignatureHeaders(request, key, new Date(1_700_000_000_000));
    const signature = Buffer.from(/^koerier=:(.+):$/.exec(headers['signature']!)![1]!, 'base64');
    expect(signature).toHaveLength(64);
    const base = signatureBase(
      { ...request, headers: { ...request.headers, ...headers } },
      [...DELIVERY_COMPONENTS, 'content-type'],
      {
        created: 1700000000,
        keyid: 'kid-ec',
        alg: 'ecdsa-p256-sha256',
      },
    );
    expect(verify('sha256', Buffer.from(base), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });
});

describe('what a signed delivery covers besides the body (issue 28, item 11)', () => {
  /** A binary-mode delivery as `webhook-request.ts` builds it: the event's attributes in `ce-` headers. */
  const binary = {
    method: 'POST',
    url: 'https://receiver.example/hook',
    headers: {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-type': 'nl.example.signed.v1',
      'ce-source': 'urn:nld:oin:00000001234567890000:systeem:a',
      'ce-id': 'event-1',
      'ce-subject': 'a%2Cb',
      'idempotency-key': '5b7e0f4e-2a36-4d67-9a59-6a1a3f3c2f10',
      authorization: 'Bearer token',
    },
    body: Buffer.from('{"hello":"world"}'),
  };
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const key: SigningKey = { keyId: 'kid-1', algorithm: 'ed25519', sign: async (data) => sign(null, data, privateKey) };

  /** Verified by the third-party library a receiver uses, asking only for what the signature always covers. */
  const verifies = async (headers: Record<string, string>): Promise<boolean> =>
    (await httpbis.verifyMessage(
      {
        keyLookup: async () => ({ id: 'kid-1', algs: ['ed25519'], verify: createVerifier(publicKey, 'ed25519') }),
        requiredFields: [...DELIVERY_COMPONENTS],
      },
      { method: 'POST', url: binary.url, headers },
    )) === true;

  it('issue 28 #11: the signature covers content-type and every ce- header of a binary-mode delivery, the ce- ones in name order, never Authorization', async () => {
    const headers = await deliverySignatureHeaders(binary, key, new Date(1_700_000_000_000));
    expect(headers['signature-input']).toBe(
      'koerier=("@method" "@target-uri" "idempotency-key" "content-digest" "content-type" "ce-id" "ce-source" "ce-specversion" "ce-subject" "ce-type");created=1700000000;keyid="kid-1";alg="ed25519"',
    );
    expect(await verifies({ ...binary.headers, ...headers })).toBe(true);
  });

  it.each([
    ['ce-id', 'event-2'],
    ['ce-source', 'urn:nld:oin:00000001234567890000:systeem:b'],
    ['ce-type', 'nl.example.other.v1'],
    ['content-type', 'text/plain'],
    ['ce-subject', 'c'],
  ])('issue 28 #11: a changed %s breaks the signature (verified with http-message-signatures)', async (name, value) => {
    const signed = { ...binary.headers, ...(await deliverySignatureHeaders(binary, key, new Date())) };
    expect(await verifies(signed)).toBe(true);
    expect(await verifies({ ...signed, [name]: value })).toBe(false);
  });

  it('issue 28 #11: a structured-mode delivery has no ce- header; its content-type is covered', () => {
    expect(deliveryComponents({ 'Content-Type': 'application/cloudevents+json', 'idempotency-key': 'k' })).toEqual([
      ...DELIVERY_COMPONENTS,
      'content-type',
    ]);
    expect(deliveryComponents({ 'idempotency-key': 'k', 'ce-id': '1' })).toEqual([...DELIVERY_COMPONENTS, 'ce-id']);
  });
});
