/**
 * Makes the queues of the pull subscriptions a stack holds in its subscriptions table but has no
 * queue for (issue 35, docs/DISASTER-RECOVERY.md, "Pull queues on the standby"). A pull queue is
 * made when its subscription is made, by the stack that took the request; nothing replicates SQS.
 * So a standby that reads the primary's subscriptions through a global table has none of their
 * queues, and the laptop host's emulator forgets them at every start. Both make them here: the
 * standby at take-over (`npm run pull-queues`, bin/pull-queues.ts), the laptop host at start.
 */
import { ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SqsPullQueues } from './sqs-pull-queues.js';
import { subscriptionOf } from './subscription-table-items.js';

export interface PullQueueProvisioning {
  /** Pull subscriptions whose queue was there already. */
  readonly present: readonly string[];
  /** Pull subscriptions without a queue: made now with `apply`, else only listed. */
  readonly missing: readonly string[];
  readonly applied: boolean;
}

export async function provisionPullQueues(
  dynamodb: DynamoDBClient,
  queues: Pick<SqsPullQueues, 'exists' | 'create'>,
  options: { readonly subscriptionsTable: string; readonly apply: boolean },
): Promise<PullQueueProvisioning> {
  const present: string[] = [];
  const missing: string[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    // Strongly consistent: on the laptop the host starts right after the subscriptions were written.
    const page = await dynamodb.send(
      new ScanCommand({
        TableName: options.subscriptionsTable,
        ConsistentRead: true,
        FilterExpression: '#delivery = :pull',
        ExpressionAttributeNames: { '#delivery': 'delivery' },
        ExpressionAttributeValues: { ':pull': { S: 'pull' } },
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      const subscription = subscriptionOf(item);
      if (subscription.pull === undefined) continue;
      if (await queues.exists(subscription.id)) {
        present.push(subscription.id);
        continue;
      }
      missing.push(subscription.id);
      if (options.apply) await queues.create(subscription.id, subscription.pull);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { present, missing, applied: options.apply };
}
