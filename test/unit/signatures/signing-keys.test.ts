/**
 * The signing-key adapters (issue 12, item 6): laptop key files and AWS KMS. KMS has no emulator,
 * so the SDK's KMS client talks to a local HTTP stand-in that answers GetPublicKey and Sign as KMS documents them (a DER
 * SubjectPublicKeyInfo; a DER ECDSA signature) from a real P-256 key; what is checked is what
 * Koerier makes of those answers: the r‖s form RFC 9421 requires, the kid, the published JWK.
 */
import { createHash, generateKeyPairSync, sign, verify } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ecdsaDerToRaw, signingKeysFor } from '../../../functions/aws/signing-keys.js';
import { startAwsServiceStub, type AwsServiceStub } from '../../support/aws-service-stub.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-signing-'));
  await writeFile(
    join(dir, 'ed.pem'),
    generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }),
  );
  await writeFile(
    join(dir, 'ec.pem'),
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
  );
  await writeFile(
    join(dir, 'rsa.pem'),
    generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** RFC 7638 §3.1: the thumbprint of the required members in lexicographic order. */
function thumbprint(jwk: Readonly<Record<string, string>>): string {
  const members = jwk['kty'] === 'OKP' ? ['crv', 'kty', 'x'] : ['crv', 'kty', 'x', 'y'];
  return createHash('sha256')
    .update(JSON.stringify(Object.fromEntries(members.map((m) => [m, jwk[m]]))))
    .digest('base64url');
}

describe('laptop signing keys (issue 12, item 6)', () => {
  it('issue 12 #6: the first key signs; every key is published as a public JWK whose kid is its RFC 7638 thumbprint', async () => {
    const keys = signingKeysFor(['local:ed', 'local:ec'], { localKeysDir: dir });
    const current = await keys.current();
    const published = await keys.publicKeys();
    expect(published.map((jwk) => [jwk['kty'], jwk['crv'], jwk['alg'], jwk['use']])).toEqual([
      ['OKP', 'Ed25519', 'EdDSA', 'sig'],
      ['EC', 'P-256', 'ES256', 'sig'],
    ]);
    for (const jwk of published) {
      expect(jwk['kid']).toBe(thumbprint(jwk));
      expect(jwk).not.toHaveProperty('d');
    }
    expect(current).toMatchObject({ keyId: published[0]!['kid'], algorithm: 'ed25519' });
    const signature = await current.sign(Buffer.from('base'));
    expect(verify(null, Buffer.from('base'), { key: published[0]!, format: 'jwk' }, signature)).toBe(true);

    const ec = await signingKeysFor(['local:ec'], { localKeysDir: dir }).current();
    const ecSignature = await ec.sign(Buffer.from('base'));
    expect(ecSignature).toHaveLength(64);
    expect(
      verify(
        'sha256',
        Buffer.from('base'),
        { key: published[1]!, format: 'jwk', dsaEncoding: 'ieee-p1363' },
        ecSignature,
      ),
    ).toBe(true);
  });

  it('issue 12 #6: no key configured: nothing published, and signing fails saying so; an RSA key is refused', async () => {
    const none = signingKeysFor([], {});
    expect(await none.publicKeys()).toEqual([]);
    await expect(none.current()).rejects.toThrow(/no signing key is configured/);
    await expect(signingKeysFor(['local:rsa'], { localKeysDir: dir }).current()).rejects.toThrow(
      /Ed25519 or EC P-256, not rsa/,
    );
  });
});

describe('KMS signing keys (issue 12, item 6)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const calls: { command: string; input: Record<string, unknown> }[] = [];
  let stub: AwsServiceStub;
  let kms: KMSClient;
  // KMS speaks JSON 1.1: the operation in X-Amz-Target, blobs in base64; calls named as the SDK's commands are.
  beforeAll(async () => {
    stub = await startAwsServiceStub((request, response, body) => {
      const input = JSON.parse(body) as Record<string, unknown>;
      const command = `${String(request.headers['x-amz-target']).replace('TrentService.', '')}Command`;
      calls.push({ command, input });
      const answer =
        command === 'GetPublicKeyCommand'
          ? {
              KeySpec: 'ECC_NIST_P256',
              KeyUsage: 'SIGN_VERIFY',
              PublicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
            }
          : {
              Signature: sign('sha256', Buffer.from(input['Message'] as string, 'base64'), privateKey).toString(
                'base64',
              ),
            };
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(answer));
    });
    kms = new KMSClient({
      region: 'eu-central-1',
      endpoint: stub.endpoint,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    });
  });
  afterAll(async () => {
    kms.destroy();
    await stub.close();
  });

  it('issue 12 #6: signs with one kms:Sign (ECDSA_SHA_256, RAW) per signature, turned into r‖s; the public key is read once', async () => {
    const keys = signingKeysFor(['arn:aws:kms:eu-central-1:123456789012:key/abc'], { kms: () => kms });
    const key = await keys.current();
    expect(key.algorithm).toBe('ecdsa-p256-sha256');
    for (let i = 0; i < 20; i++) {
      const signature = await key.sign(Buffer.from(`base ${i}`));
      expect(signature).toHaveLength(64);
      expect(verify('sha256', Buffer.from(`base ${i}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(
        true,
      );
    }
    const [jwk] = await keys.publicKeys();
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: key.keyId });
    expect(calls.filter((call) => call.command === 'GetPublicKeyCommand')).toHaveLength(1);
    expect(calls.filter((call) => call.command === 'SignCommand')).toHaveLength(20);
    expect(calls.find((call) => call.command === 'SignCommand')?.input).toMatchObject({
      MessageType: 'RAW',
      SigningAlgorithm: 'ECDSA_SHA_256',
    });
  });

  it('issue 12 #6: DER integers with a leading zero or fewer than 32 bytes become exactly 32 bytes each', () => {
    const r = Buffer.concat([Buffer.from([0x00, 0x80]), Buffer.alloc(31, 1)]); // 33 bytes, sign-padded
    const s = Buffer.alloc(30, 2); // short
    const der = Buffer.concat([
      Buffer.from([0x30, 2 + r.length + 2 + s.length, 0x02, r.length]),
      r,
      Buffer.from([0x02, s.length]),
      s,
    ]);
    const raw = ecdsaDerToRaw(der, 32);
    expect(raw).toHaveLength(64);
    expect(raw.subarray(0, 32)).toEqual(r.subarray(1));
    expect(raw.subarray(32)).toEqual(Buffer.concat([Buffer.alloc(2), s]));
    expect(() => ecdsaDerToRaw(Buffer.from([0x31, 0]), 32)).toThrow(/not a DER/);
  });
});
