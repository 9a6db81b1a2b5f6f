/** The partner store in memory, for unit tests: the same revision check and size bound as the DynamoDB adapter. */
import { EMPTY_DIRECTORY, type DirectoryState } from '../../../functions/core/partners/partner.js';
import {
  DirectoryChangedError,
  DirectoryTooLargeError,
  MAX_DIRECTORY_BYTES,
  type PartnerStore,
} from '../../../functions/core/partners/ports.js';

export class MemoryPartnerStore implements PartnerStore {
  private state: DirectoryState = EMPTY_DIRECTORY;
  loads = 0;

  async load(): Promise<DirectoryState> {
    this.loads++;
    return structuredClone(this.state);
  }

  async save(next: DirectoryState, expectedRevision: number): Promise<void> {
    if (this.state.revision !== expectedRevision) throw new DirectoryChangedError();
    if (Buffer.byteLength(JSON.stringify(next.partners)) + Buffer.byteLength(next.seed ?? '') > MAX_DIRECTORY_BYTES)
      throw new DirectoryTooLargeError('the partner directory is full');
    this.state = structuredClone(next);
  }
}
