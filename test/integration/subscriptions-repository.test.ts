/**
 * The subscription repository on DynamoDB (dynalite), with the route index kept in step: the same
 * store contract the in-memory store passes (test/unit/subscriptions/store-contract.ts).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { RouteIndexRepository } from '../../functions/aws/route-index-repository.js';
import { SubscriptionRepository } from '../../functions/aws/subscription-repository.js';
import { localName } from '../../lib/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { describeSubscriptionStoreContract } from '../unit/subscriptions/store-contract.js';

let emulators: Emulators;
let client: DynamoDBClient;
let routes: RouteIndexRepository;
let repository: SubscriptionRepository;

beforeAll(async () => {
  emulators = await startEmulators();
  client = new DynamoDBClient({
    region: emulators.region,
    endpoint: emulators.endpoints.dynamodb,
    credentials: { accessKeyId: emulators.awsEnvironment['AWS_ACCESS_KEY_ID']!, secretAccessKey: emulators.awsEnvironment['AWS_SECRET_ACCESS_KEY']! },
  });
  routes = new RouteIndexRepository(client, localName.table('routes'));
  repository = new SubscriptionRepository(client, localName.table('subscriptions'), routes);
});
afterAll(async () => {
  client?.destroy();
  await emulators?.stop();
});

describeSubscriptionStoreContract('DynamoDB (dynalite)', () => ({ store: repository, routes }));
