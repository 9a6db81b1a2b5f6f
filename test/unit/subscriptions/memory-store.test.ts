import { InMemorySubscriptionStore } from '../../../functions/core/routing/memory-subscription-store.js';
import { describeSubscriptionStoreContract } from './store-contract.js';

describeSubscriptionStoreContract('in memory', () => {
  const store = new InMemorySubscriptionStore();
  return { store, routes: store };
});
