/**
 * The partner directory on DynamoDB (dynalite): the one item is written only at the revision it
 * was read at, so a change checked against every partner cannot land on top of another change.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbPartnerStore } from '../../functions/aws/dynamodb-partner-store.js';
import type { Partner } from '../../functions/core/partners/partner.js';
import { DirectoryChangedError, DirectoryTooLargeError } from '../../functions/core/partners/ports.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

let emulators: Emulators;
let dynamodb: DynamoDBClient;
let store: DynamoDbPartnerStore;

const partner = (clientId: string, publishGrants: string[] = []): Partner => ({
  clientId,
  publishGrants,
  entitlements: [{ typePrefix: 'nl.edu.', source: 'urn:nld:oin:1' }],
  version: 1,
  createdAt: '2026-11-23T18:00:00.000Z',
  updatedAt: '2026-11-23T18:00:00.000Z',
  updatedBy: 'ops',
});

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  store = new DynamoDbPartnerStore(dynamodb, emulators.resourceEnvironment[resourceEnv.table('partners')]!);
});
afterAll(async () => {
  dynamodb?.destroy();
  await emulators?.stop();
});

describe('partner directory on DynamoDB (issue 12)', () => {
  it('EDU-IN: a directory never written reads empty; a write at a revision no longer current is refused, the first one stands', async () => {
    expect(await store.load()).toEqual({ revision: 0, partners: [] });
    await store.save({ revision: 1, seed: '[]', partners: [partner('school-a', ['urn:nld:oin:0001'])] }, 0);
    // A second writer that also read revision 0 (the empty directory) loses.
    await expect(
      store.save({ revision: 1, partners: [partner('school-b', ['urn:nld:oin:0001:lvs'])] }, 0),
    ).rejects.toBeInstanceOf(DirectoryChangedError);
    await store.save(
      { revision: 2, seed: '[]', partners: [partner('school-a', ['urn:nld:oin:0001']), partner('school-c')] },
      1,
    );
    await expect(store.save({ revision: 2, partners: [] }, 1)).rejects.toBeInstanceOf(DirectoryChangedError);
    expect(await store.load()).toEqual({
      revision: 2,
      seed: '[]',
      partners: [partner('school-a', ['urn:nld:oin:0001']), partner('school-c')],
    });
  });

  it('issue 12: a directory that would not fit its item is refused before it is written', async () => {
    const current = await store.load();
    const many = Array.from({ length: 2000 }, (_, index) =>
      partner(`school-${index}-${'x'.repeat(100)}`, [`urn:nld:oin:${index}`]),
    );
    await expect(
      store.save({ revision: current.revision + 1, partners: many }, current.revision),
    ).rejects.toBeInstanceOf(DirectoryTooLargeError);
    expect((await store.load()).revision).toBe(current.revision);
  });
});
