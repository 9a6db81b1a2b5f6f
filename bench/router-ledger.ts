/**
 * The router's DynamoDB work per routed event (issue 15, item 2), through `routeInboundEvents` on
 * dynalite with the real route index and routed-event ledger: requests by operation and the write
 * and read units DynamoDB reports (ReturnConsumedCapacity, bench/support/aws-usage.ts), per event.
 *
 * Two ledgers, same run, same events, batches of 10 (the router's SQS batch size):
 * - `perEvent`: one marker write to claim, one to mark routed (`complete`) — the ledger without
 *   `batch()`, as the router used it before;
 * - `batched`: the claim, then one commit write per batch (`batch().completeAll`).
 * Each also routes the same events again (`duplicates`): every one dropped, at what cost.
 * Deliveries are handed to a function that keeps them: this measures DynamoDB, not SQS.
 * `npm run bench -- router-ledger`.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbRouteIndex } from '../functions/aws/dynamodb-route-index.js';
import { createS3Client, createSqsClient } from '../functions/aws/clients.js';
import { DynamoDbRoutedEventLedger } from '../functions/aws/dynamodb-routed-event-ledger.js';
import { queueOutbox } from '../functions/core/delivery-message/outbox.js';
import { SubscriptionMatcher } from '../functions/core/routing/matcher.js';
import { routeInboundEvents, type InboundRecord } from '../functions/core/routing/route-events.js';
import { routeEntriesOf } from '../functions/core/routing/route-keys.js';
import type { RoutedEventLedger } from '../functions/core/routing/routed-events.js';
import { localName } from '../functions/config/resources.js';
import { startEmulators } from '../local/emulators.js';
import { recordAwsUsage } from './support/aws-usage.js';

/** Its one subscriber may receive every type (a grant of ""). */
const EVERY_OWNER_ENTITLED = new Map([['bench', [{ typePrefix: '' }]]]);

const EVENTS = 200;
const BATCH = 10;
const TYPE = 'nl.edu.bench.ledger.v1';

export async function run(): Promise<Record<string, unknown>> {
  const emulators = await startEmulators();
  const dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  // Only DynamoDB is sent to here; the recorder wants all three clients.
  const usage = recordAwsUsage({
    dynamodb,
    sqs: createSqsClient(emulators.clientSettings('sqs')),
    s3: createS3Client(emulators.clientSettings('s3')),
  });
  const index = new DynamoDbRouteIndex(dynamodb, localName.table('routes'));
  const match = { types: [TYPE] };
  await index.putEntries(
    {
      subscriptionId: randomUUID(),
      owner: 'bench',
      match,
      contentMode: 'structured',
      batchSupported: false,
      delivery: 'push',
    },
    routeEntriesOf(match),
  );
  await index.bumpGeneration();
  const store = new DynamoDbRoutedEventLedger(dynamodb, localName.table('idempotency'));

  const measure = async (ledger: RoutedEventLedger) => {
    const matcher = new SubscriptionMatcher(index);
    const records: InboundRecord[] = Array.from({ length: EVENTS }, (_, i) => ({
      recordId: `r-${i}`,
      body: JSON.stringify({
        specversion: '1.0',
        id: randomUUID(),
        source: 'urn:bench:ledger',
        type: TYPE,
        data: { i },
      }),
    }));
    const routeAll = async () => {
      usage.reset();
      let routed = 0;
      let duplicates = 0;
      for (let start = 0; start < records.length; start += BATCH) {
        const batch = records.slice(start, start + BATCH);
        const report = await usage.invocation('router', batch.length, () =>
          routeInboundEvents(batch, {
            matcher,
            ledger,
            entitlements: EVERY_OWNER_ENTITLED,
            outbox: queueOutbox({
              deliveryQueue: { send: async () => undefined },
              pullQueues: { send: async () => undefined },
            }),
            now: () => Date.now(),
            lockMs: 60_000,
            ttlSeconds: 3600,
            maxMessageBytes: 200_000,
          }),
        );
        if (report.failedRecordIds.length > 0) throw new Error(`${report.failedRecordIds.length} records failed`);
        routed += report.routed;
        duplicates += report.duplicates;
      }
      const stage = usage.snapshot()['router']!;
      const perEvent = (n: number) => Math.round((n / EVENTS) * 1000) / 1000;
      return {
        routed,
        duplicates,
        requestsPerEvent: Object.fromEntries(
          Object.entries(stage.requests).map(([operation, n]) => [operation, perEvent(n)]),
        ),
        writeUnitsPerEvent: perEvent(stage.units.dynamodbWriteUnits),
        readUnitsPerEvent: perEvent(stage.units.dynamodbReadUnits),
      };
    };
    const first = await routeAll();
    const again = await routeAll();
    return { routing: first, duplicates: again };
  };

  try {
    // The ledger as the router used it before `batch()`: the same store, claim and complete per event.
    const perEvent = await measure({
      claim: (e, o) => store.claim(e, o),
      complete: (e, c) => store.complete(e, c),
      abandon: (e, c) => store.abandon(e, c),
    });
    const batched = await measure(store);
    return {
      description:
        'DynamoDB requests and units per routed event through routeInboundEvents (dynalite), batches of 10, one matching subscription; ' +
        'perEvent = claim + complete per event (before), batched = claim per event + one commit per batch (after); duplicates = the same events routed again',
      events: EVENTS,
      batchSize: BATCH,
      perEvent,
      batched,
      ratio: {
        writeUnits:
          Math.round((batched.routing.writeUnitsPerEvent / perEvent.routing.writeUnitsPerEvent) * 1000) / 1000,
      },
    };
  } finally {
    dynamodb.destroy();
    await emulators.stop();
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await run(), null, 2));
}
