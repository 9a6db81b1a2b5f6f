/**
 * How the receiver kit reads Koerier's key directory (issue 30 item 6, issue 12 item 6's rotation):
 * once, then from its cache; again when a keyid is unknown and the set is older than 30 s (a new key
 * in front after a rotation), and after the cache time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { signatureVerifier } from '../../../receiver/src/message-signature.js';
import { buildVectors, type VectorRequest } from '../../support/receiver-vectors.js';

afterEach(() => void vi.useRealTimers());

describe("the receiver kit's key directory (issue 30 item 6)", () => {
  it('issue 30 item 6: the directory is read once, read again for an unknown keyid only after 30 s, and a key added by a rotation is then found', async () => {
    const { receiver, vectors } = await buildVectors();
    const signed = vectors.find((vector) => vector.name === 'structured')!.request as VectorRequest;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(receiver.now * 1000);
    let published: readonly unknown[] = [];
    const urls: string[] = [];
    const fetchKeys = (async (url: string) => {
      urls.push(url);
      return new Response(JSON.stringify({ keys: published }), {
        headers: { 'content-type': 'application/jwk-set+json' },
      });
    }) as typeof fetch;
    const verify = signatureVerifier({ koerier: 'https://koerier.example.org' }, fetchKeys);
    const request = { ...signed, body: new TextEncoder().encode(signed.body) };

    // Before the rotation reached the directory: the signing key is not published.
    expect(await verify(request, receiver.now * 1000)).toMatch(/does not verify/);
    expect(await verify(request, receiver.now * 1000)).toMatch(/does not verify/);
    expect(urls).toEqual(['https://koerier.example.org/.well-known/http-message-signatures-directory']);

    published = receiver.keys.keys;
    vi.setSystemTime(receiver.now * 1000 + 31_000);
    expect(await verify(request, receiver.now * 1000)).toBeUndefined();
    expect(urls).toHaveLength(2);
    expect(await verify(request, receiver.now * 1000)).toBeUndefined();
    expect(urls).toHaveLength(2);
  });
});
