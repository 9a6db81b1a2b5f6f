/**
 * The builders of the erasure members (issue 31 item 4), beside ./adapters.ts: the audit records,
 * the erasures queue, and the stores event data rests in as the erasure worker reaches them.
 */
import { DynamoDbDeliveryState } from '../aws/dynamodb-delivery-state.js';
import { DynamoDbErasureStore } from '../aws/dynamodb-erasure-store.js';
import { DynamoDbLaneErasure } from '../aws/dynamodb-lane-erasure.js';
import { DynamoDbPayloadLedger } from '../aws/dynamodb-payload-ledger.js';
import { S3ClaimCheckStore } from '../aws/s3-claim-check-store.js';
import { S3EventArchive } from '../aws/s3-event-archive.js';
import { SqsErasureQueue } from '../aws/sqs-erasure-queue.js';
import { SqsPullQueues } from '../aws/sqs-pull-queues.js';
import { subscriptions } from './adapters.js';
import { dynamodbClient, s3Client, sqsClient } from './client-kinds.js';
import type { Member } from './composition.js';

export const erasureStore: Member<'erasureStore'> = (c) =>
  new DynamoDbErasureStore(c.client(dynamodbClient), c.config.resources.table('deliveries'));

export const erasureQueue: Member<'erasureQueue'> = (c) =>
  new SqsErasureQueue(c.client(sqsClient), c.config.resources.queueUrl('erasures'));

export const erasableStores: Member<'erasableStores'> = (c) => {
  const { resources } = c.config;
  return {
    archive: new S3EventArchive(c.client(s3Client), resources.bucket('archive')),
    claimCheck: new S3ClaimCheckStore(c.client(s3Client), resources.bucket('payloads')),
    payloadLedger: new DynamoDbPayloadLedger(c.client(dynamodbClient), resources.table('idempotency')),
    subscriptions: subscriptions(c),
    deadLetters: new DynamoDbDeliveryState(c.client(dynamodbClient), resources.table('deliveries'), c.clock),
    pullQueues: new SqsPullQueues(c.client(sqsClient), resources.pullQueuePrefix()),
    orderedLanes: new DynamoDbLaneErasure(c.client(dynamodbClient), resources.table('deliveries')),
  };
};
