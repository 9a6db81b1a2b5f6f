import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialCipherFor, LocalCredentialCipher } from '../../../functions/aws/credential-cipher.js';
import {
  openSinkCredential,
  sealSinkCredential,
  type SinkCredential,
} from '../../../functions/core/credentials/sink-credential.js';

const credential: SinkCredential = {
  kind: 'oauth2-client-credentials',
  tokenUrl: 'https://idp.example/token',
  clientId: 'koerier',
  clientSecret: 'very-secret-client-secret',
  scope: 'events',
};

let keysDir: string;

beforeAll(async () => {
  keysDir = await mkdtemp(join(tmpdir(), 'koerier-keys-'));
  await writeFile(join(keysDir, 'credentials.key'), randomBytes(32).toString('base64'));
});
afterAll(() => rm(keysDir, { recursive: true, force: true }));

describe('sink credentials at rest', () => {
  it('EDU-14: a sealed credential holds no secret in the clear and opens again for its own subscription', async () => {
    const cipher = credentialCipherFor('local:credentials', { localKeysDir: keysDir });
    const sealed = await sealSinkCredential(credential, 'sub-1', cipher);
    expect(sealed.kind).toBe('oauth2-client-credentials');
    expect(sealed.ciphertext).not.toContain('very-secret');
    expect(Buffer.from(sealed.ciphertext.split('.').at(-1)!, 'base64url').toString('latin1')).not.toContain(
      'very-secret',
    );
    expect(await openSinkCredential(sealed, 'sub-1', cipher)).toEqual(credential);
  });

  it('EDU-14: a ciphertext copied to another subscription, altered, or opened with another key does not open', async () => {
    const cipher = credentialCipherFor('local:credentials', { localKeysDir: keysDir });
    const sealed = await sealSinkCredential({ kind: 'bearer', token: 'abc' }, 'sub-1', cipher);
    await expect(openSinkCredential(sealed, 'sub-2', cipher)).rejects.toThrow();
    const parts = sealed.ciphertext.split('.');
    const flipped = Buffer.from(parts[3]!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    await expect(
      openSinkCredential(
        { ...sealed, ciphertext: [...parts.slice(0, 3), flipped.toString('base64url')].join('.') },
        'sub-1',
        cipher,
      ),
    ).rejects.toThrow();
    await expect(openSinkCredential(sealed, 'sub-1', new LocalCredentialCipher(randomBytes(32)))).rejects.toThrow();
  });

  it('EDU-14: every encryption uses a fresh IV, so equal credentials do not look equal at rest', async () => {
    const cipher = credentialCipherFor('local:credentials', { localKeysDir: keysDir });
    const a = await sealSinkCredential({ kind: 'bearer', token: 'same' }, 'sub-1', cipher);
    const b = await sealSinkCredential({ kind: 'bearer', token: 'same' }, 'sub-1', cipher);
    expect(a.ciphertext).not.toBe(b.ciphertext);
  });

  it('a laptop key without a key directory is a configuration error, not a silent plaintext store', () => {
    expect(() => credentialCipherFor('local:credentials')).toThrow(/no directory/);
  });
});
