import { InMemoryIdempotencyStore } from '../../support/memory/memory-idempotency-store.js';
import { describeIdempotencyStoreContract } from './store-contract.js';

describeIdempotencyStoreContract('in memory', () => new InMemoryIdempotencyStore());
