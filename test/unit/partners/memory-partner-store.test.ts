import { describe, expect, it } from 'vitest';
import { MemoryPartnerStore } from '../../support/memory/memory-partner-store.js';
import type { Partner } from '../../../functions/core/partners/partner.js';
import { DirectoryTooLargeError, MAX_DIRECTORY_BYTES } from '../../../functions/core/partners/ports.js';

/** One partner whose directory document (its partners as JSON) is exactly `bytes` long. */
function partnersOf(bytes: number): Partner[] {
  const partner: Partner = {
    clientId: 'c',
    description: '',
    publishGrants: [],
    entitlements: [],
    version: 1,
    createdAt: '',
    updatedAt: '',
    updatedBy: 'ops',
  };
  const padding = bytes - Buffer.byteLength(JSON.stringify([partner]));
  return [{ ...partner, description: 'd'.repeat(padding) }];
}

describe('the partner store in memory, as the unit tests use it (issue 12)', () => {
  // The unit tests of directory-full rely on this double refusing where the DynamoDB adapter does.
  it('issue 12: a directory up to MAX_DIRECTORY_BYTES, seed included, is stored; one byte more is refused', async () => {
    const store = new MemoryPartnerStore();
    await store.save({ revision: 1, partners: partnersOf(MAX_DIRECTORY_BYTES) }, 0);
    expect((await store.load()).revision).toBe(1);
    await expect(store.save({ revision: 2, partners: partnersOf(MAX_DIRECTORY_BYTES + 1) }, 1)).rejects.toBeInstanceOf(
      DirectoryTooLargeError,
    );
    await expect(
      store.save({ revision: 2, seed: 'xx', partners: partnersOf(MAX_DIRECTORY_BYTES - 1) }, 1),
    ).rejects.toBeInstanceOf(DirectoryTooLargeError);
    expect((await store.load()).revision).toBe(1);
  });
});
