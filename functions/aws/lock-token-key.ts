/**
 * Where the key that seals lock tokens (functions/core/pull/lock-token.ts) comes from. Every
 * container of the pull function must use the same 32 bytes, and they must never sit in plain
 * text in the function's configuration:
 *
 * - In AWS: a data key wrapped by the stack's `lockTokens` KMS key, kept in the `deliveries` table
 *   (`pk` `#keys`, `sk` `lock-tokens`). The first container that finds none draws 32 random bytes,
 *   wraps them with KMS `Encrypt` and stores them with a conditional put; a container that loses
 *   that race reads the winner's. After that each container pays one `GetItem` and one KMS
 *   `Decrypt`, once. No new dependency (Secrets Manager's client is not in the bundle), and the
 *   key is only readable by a role allowed both the table and KMS `Decrypt`.
 * - On the laptop: the file `<state>/keys/lockTokens.key` (local/local-keys.ts), as the credential
 *   key; the key's resource variable says `local:lockTokens`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { DecryptCommand, EncryptCommand, type KMSClient } from '@aws-sdk/client-kms';
import { PK, SK } from './delivery-table-items.js';

const LOCAL_PREFIX = 'local:';
const KEY_ITEM = { [PK]: { S: '#keys' }, [SK]: { S: 'lock-tokens' } };
const CONTEXT = { purpose: 'koerier-lock-tokens' };

export function lockTokenKeySource(
  keyId: string,
  options: { kms: () => KMSClient; localKeysDir?: string; dynamodb: () => DynamoDBClient; tableName: () => string },
): () => Promise<Buffer> {
  let key: Promise<Buffer> | undefined;
  return () => {
    key ??= (
      keyId.startsWith(LOCAL_PREFIX)
        ? Promise.resolve(localKey(keyId, options.localKeysDir))
        : wrappedKey(keyId, options.kms(), options.dynamodb(), options.tableName())
    ).catch((error: unknown) => {
      key = undefined;
      throw error;
    });
    return key;
  };
}

function localKey(keyId: string, localKeysDir: string | undefined): Buffer {
  if (!localKeysDir) throw new Error(`key ${keyId} is a laptop key, but no directory of local key files is configured`);
  const key = Buffer.from(
    readFileSync(join(localKeysDir, `${keyId.slice(LOCAL_PREFIX.length)}.key`), 'utf8').trim(),
    'base64',
  );
  if (key.length !== 32) throw new Error('a lock token key is 32 bytes');
  return key;
}

async function wrappedKey(keyId: string, kms: KMSClient, dynamodb: DynamoDBClient, tableName: string): Promise<Buffer> {
  const read = async () =>
    (await dynamodb.send(new GetItemCommand({ TableName: tableName, Key: KEY_ITEM, ConsistentRead: true }))).Item?.[
      'wrapped'
    ]?.B;
  let wrapped = await read();
  if (!wrapped) {
    const plaintext = randomBytes(32);
    const { CiphertextBlob: sealed } = await kms.send(
      new EncryptCommand({ KeyId: keyId, Plaintext: plaintext, EncryptionContext: CONTEXT }),
    );
    if (!sealed) throw new Error('KMS returned no ciphertext');
    try {
      await dynamodb.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { ...KEY_ITEM, wrapped: { B: sealed } },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': PK },
        }),
      );
      return plaintext;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      wrapped = await read();
      if (!wrapped) throw error;
    }
  }
  const { Plaintext: unwrapped } = await kms.send(
    new DecryptCommand({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: CONTEXT }),
  );
  if (!unwrapped) throw new Error('KMS returned no plaintext');
  return Buffer.from(unwrapped);
}
