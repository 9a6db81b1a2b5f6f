/**
 * The partner directory's storage: one document with every partner, written only at the revision
 * it was read at. A directory of partners is small (a few hundred bytes each), and reading it
 * whole makes the overlap check of publish grants exact: a change is validated against every other
 * partner at revision N and stored only if the directory is still at N.
 */
import type { DirectoryState } from './partner.js';

export interface PartnerStore {
  /** The directory as last written (strongly consistent); `EMPTY_DIRECTORY` when never written. */
  load(): Promise<DirectoryState>;
  /**
   * Stores `next` (whose revision is `expectedRevision + 1`) if the stored directory is still at
   * `expectedRevision`; throws `DirectoryChangedError` otherwise, and `DirectoryTooLargeError` when
   * the document would not fit its item.
   */
  save(next: DirectoryState, expectedRevision: number): Promise<void>;
}

export class DirectoryChangedError extends Error {
  override name = 'DirectoryChangedError';
  constructor() {
    super('the partner directory changed since it was read');
  }
}

export class DirectoryTooLargeError extends Error {
  override name = 'DirectoryTooLargeError';
}

/**
 * The largest directory document stored: DynamoDB's item limit is 400 KB; the rest is room for
 * the key and attribute names. Each adapter refuses above it, so both hosts hold the same.
 */
export const MAX_DIRECTORY_BYTES = 350_000;
