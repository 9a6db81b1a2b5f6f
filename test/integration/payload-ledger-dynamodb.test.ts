/**
 * The claim check's payload ledger on DynamoDB (dynalite), beside the memory ledger that the unit
 * tests use: a record written again for the same data keeps its readers and takes the new expiry,
 * and a record of other data is never written over (issue 28, item 8).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbPayloadLedger } from '../../functions/aws/dynamodb-payload-ledger.js';
import { InMemoryPayloadLedger } from '../support/memory/claim-check-memory-adapters.js';
import {
  PayloadRecordConflictError,
  type PayloadLedger,
  type PayloadRecord,
} from '../../functions/core/claim-check/ports.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

let emulators: Emulators;
let dynamodb: DynamoDBClient;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
});

afterAll(async () => {
  dynamodb?.destroy();
  await emulators?.stop();
});

const record = (payloadId: string, digest: string, objectExpiresAt: number): Omit<PayloadRecord, 'readers'> => ({
  payloadId,
  objectKey: `payloads/${payloadId}`,
  source: 'urn:nld:oin:0001:lvs',
  eventId: 'e-1',
  publisher: 'school-a',
  digest,
  size: 5,
  contentType: 'text/plain',
  objectExpiresAt,
});

describe.each<[string, () => PayloadLedger]>([
  [
    'DynamoDB (dynalite)',
    () => new DynamoDbPayloadLedger(dynamodb, emulators.resourceEnvironment[resourceEnv.table('idempotency')]!),
  ],
  ['memory', () => new InMemoryPayloadLedger()],
])('the payload ledger, %s', (_, ledgerOf) => {
  it('EDU-IDEM-15, EDU-1, issue 28: the same data recorded again keeps its readers and takes the new expiry; a record of other data is never written over', async () => {
    const ledger = ledgerOf();
    const payloadId = `p-${Math.random().toString(36).slice(2)}`;
    await ledger.recordPayload(record(payloadId, 'sha-256=:first:', 1_000));
    await ledger.addReaders(payloadId, ['school-b']);
    await ledger.recordPayload(record(payloadId, 'sha-256=:first:', 2_000));
    expect(await ledger.get(payloadId)).toMatchObject({
      digest: 'sha-256=:first:',
      objectExpiresAt: 2_000,
      readers: ['school-b'],
    });
    await expect(ledger.recordPayload(record(payloadId, 'sha-256=:second:', 3_000))).rejects.toBeInstanceOf(
      PayloadRecordConflictError,
    );
    expect(await ledger.get(payloadId)).toMatchObject({
      digest: 'sha-256=:first:',
      objectExpiresAt: 2_000,
      readers: ['school-b'],
    });
  });
});
