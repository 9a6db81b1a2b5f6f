/**
 * The lock-token key on the SDK's KMS client (functions/aws/lock-token-key.ts): the deliveries
 * table on dynalite, KMS a real local HTTP server answering Encrypt and Decrypt as KMS documents
 * them (blobs in base64, the encryption context bound). The first container wraps a fresh key and
 * stores it; another container unwraps the same 32 bytes; a plain Decrypt reads the same key from
 * the stored blob.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DecryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PK, SK } from '../../functions/aws/delivery-table-items.js';
import { createKmsClient } from '../../functions/aws/clients.js';
import { lockTokenKeySource } from '../../functions/aws/lock-token-key.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
const CREDENTIALS = { accessKeyId: 'AKIDLOCKTOKENS', secretAccessKey: 'lock-token-test-secret' };

let emulators: Emulators;
let dynamodb: DynamoDBClient;
let table: string;
let kmsServer: Server;
let kmsEndpoint: string;
const kmsCalls: { target: string; body: Record<string, unknown> }[] = [];

/** A blob only this "KMS" opens, and only under the context it was made with. */
const wrap = (plaintext: string, context: unknown) =>
  Buffer.from(JSON.stringify({ plaintext, context })).toString('base64');

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  table = emulators.resourceEnvironment[resourceEnv.table('deliveries')]!;
  kmsServer = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
      const target = String(request.headers['x-amz-target']);
      kmsCalls.push({ target, body });
      const answer = (status: number, value: object) =>
        response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(value));
      if (target === 'TrentService.Encrypt')
        return answer(200, { CiphertextBlob: wrap(body['Plaintext']!, body['EncryptionContext']), KeyId: KEY_ARN });
      const sealed = JSON.parse(Buffer.from(body['CiphertextBlob']!, 'base64').toString('utf8')) as {
        plaintext: string;
        context: unknown;
      };
      if (JSON.stringify(sealed.context) !== JSON.stringify(body['EncryptionContext']))
        return answer(400, { __type: 'InvalidCiphertextException' });
      answer(200, { Plaintext: sealed.plaintext, KeyId: KEY_ARN });
    });
  });
  await new Promise<void>((resolve) => kmsServer.listen(0, '127.0.0.1', resolve));
  kmsEndpoint = `http://127.0.0.1:${(kmsServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  dynamodb?.destroy();
  await new Promise((resolve) => kmsServer?.close(resolve));
  await emulators?.stop();
});

describe('lock-token key on the SDK KMS client', () => {
  it('issue 12: the first container wraps and stores a 32-byte key, the next unwraps the same one, and so does a plain KMS Decrypt', async () => {
    const containerKey = () => {
      const kms = createKmsClient({ region: 'eu-west-1', endpoint: kmsEndpoint, credentials: CREDENTIALS });
      return lockTokenKeySource(KEY_ARN, { kms: () => kms, dynamodb: () => dynamodb, tableName: () => table });
    };
    const first = await containerKey()();
    expect(first).toHaveLength(32);
    const second = await containerKey()();
    expect(second).toEqual(first);
    expect(kmsCalls.map((call) => [call.target, call.body['EncryptionContext']])).toEqual([
      ['TrentService.Encrypt', { purpose: 'koerier-lock-tokens' }],
      ['TrentService.Decrypt', { purpose: 'koerier-lock-tokens' }],
    ]);

    const stored = await dynamodb.send(
      new GetItemCommand({
        TableName: table,
        Key: { [PK]: { S: '#keys' }, [SK]: { S: 'lock-tokens' } },
        ConsistentRead: true,
      }),
    );
    const sdk = new KMSClient({ region: 'eu-west-1', endpoint: kmsEndpoint, credentials: CREDENTIALS });
    const viaSdk = await sdk.send(
      new DecryptCommand({
        KeyId: KEY_ARN,
        CiphertextBlob: stored.Item!['wrapped']!.B!,
        EncryptionContext: { purpose: 'koerier-lock-tokens' },
      }),
    );
    sdk.destroy();
    expect(Buffer.from(viaSdk.Plaintext!)).toEqual(first);
  });
});
