import { InMemoryIdempotencyStore } from '../../../functions/core/idempotency/index.js';
import { describeIdempotencyStoreContract } from './store-contract.js';

describeIdempotencyStoreContract('in memory', () => new InMemoryIdempotencyStore());
