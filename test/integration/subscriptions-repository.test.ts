/**
 * The subscription repository on DynamoDB (dynalite), with the route index kept in step: the same
 * store contract the in-memory store passes (test/unit/subscriptions/store-contract.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { DynamoDbRouteIndex } from '../../functions/aws/dynamodb-route-index.js';
import { DynamoDbSubscriptionStore } from '../../functions/aws/dynamodb-subscription-store.js';
import { localName } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { describeSubscriptionStoreContract } from '../unit/subscriptions/store-contract.js';

let emulators: Emulators;
let client: DynamoDBClient;
let routes: DynamoDbRouteIndex;
let repository: DynamoDbSubscriptionStore;

beforeAll(async () => {
  emulators = await startEmulators();
  client = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  routes = new DynamoDbRouteIndex(client, localName.table('routes'));
  repository = new DynamoDbSubscriptionStore(client, localName.table('subscriptions'), routes);
});
afterAll(async () => {
  client?.destroy();
  await emulators?.stop();
});

describeSubscriptionStoreContract('DynamoDB (dynalite)', () => ({
  store: repository,
  routes,
  keyRequirements: routes,
}));
