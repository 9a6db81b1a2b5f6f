/**
 * The `CredentialCipher` implementations: AWS KMS in AWS, AES-256-GCM with a key file on the
 * laptop (no KMS emulator exists). The key's resource variable says which: `local:<name>` on the
 * laptop host (the file `<localKeysDir>/<name>.key`, 32 random bytes in base64), a KMS key ARN or
 * id in AWS. The encryption context is bound in both: KMS `EncryptionContext`, GCM additional data.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CredentialCipher } from '../core/credentials/sink-credential.js';
import { DecryptCommand, EncryptCommand, type KMSClient } from '@aws-sdk/client-kms';

const LOCAL_PREFIX = 'local:';
const KMS_FORMAT = 'kms1';
const LOCAL_FORMAT = 'aesgcm1';

/**
 * The cipher for a key as its resource variable names it. `kms` is asked for its client only for
 * a KMS key, so the laptop never builds one; the composition root owns the client.
 */
export function credentialCipherFor(
  keyId: string,
  options: { kms?: () => KMSClient; localKeysDir?: string } = {},
): CredentialCipher {
  if (!keyId.startsWith(LOCAL_PREFIX)) {
    if (!options.kms) throw new Error(`key ${keyId} is a KMS key, but no KMS client is configured`);
    return new KmsCredentialCipher(options.kms(), keyId);
  }
  const name = keyId.slice(LOCAL_PREFIX.length);
  if (!options.localKeysDir)
    throw new Error(`key ${keyId} is a laptop key, but no directory of local key files is configured`);
  const key = Buffer.from(readFileSync(join(options.localKeysDir, `${name}.key`), 'utf8').trim(), 'base64');
  return new LocalCredentialCipher(key);
}

export class KmsCredentialCipher implements CredentialCipher {
  constructor(
    private readonly client: KMSClient,
    private readonly keyId: string,
  ) {}

  async encrypt(plaintext: string, context: Readonly<Record<string, string>>): Promise<string> {
    const { CiphertextBlob } = await this.client.send(
      new EncryptCommand({
        KeyId: this.keyId,
        Plaintext: Buffer.from(plaintext, 'utf8'),
        EncryptionContext: { ...context },
      }),
    );
    if (!CiphertextBlob) throw new Error('KMS returned no ciphertext');
    return `${KMS_FORMAT}.${Buffer.from(CiphertextBlob).toString('base64url')}`;
  }

  async decrypt(ciphertext: string, context: Readonly<Record<string, string>>): Promise<string> {
    const [format, blob] = ciphertext.split('.');
    if (format !== KMS_FORMAT || !blob) throw new Error('not a KMS-encrypted credential');
    const { Plaintext } = await this.client.send(
      new DecryptCommand({
        KeyId: this.keyId,
        CiphertextBlob: Buffer.from(blob, 'base64url'),
        EncryptionContext: { ...context },
      }),
    );
    if (!Plaintext) throw new Error('KMS returned no plaintext');
    return Buffer.from(Plaintext).toString('utf8');
  }
}

/** AES-256-GCM, a fresh 96-bit IV per encryption, the context as additional authenticated data. */
export class LocalCredentialCipher implements CredentialCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a local credential key is 32 bytes');
  }

  async encrypt(plaintext: string, context: Readonly<Record<string, string>>): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(additionalData(context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [LOCAL_FORMAT, iv, cipher.getAuthTag(), sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  async decrypt(ciphertext: string, context: Readonly<Record<string, string>>): Promise<string> {
    const [format, iv, tag, sealed] = ciphertext.split('.');
    if (format !== LOCAL_FORMAT || !iv || !tag || sealed === undefined)
      throw new Error('not a locally encrypted credential');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(additionalData(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }
}

function additionalData(context: Readonly<Record<string, string>>): Buffer {
  return Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))), 'utf8');
}
