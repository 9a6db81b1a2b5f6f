/**
 * One event's deliveries in one subscription's partition of the `deliveries` table (issue 30 item 1),
 * for the event trace. Nothing on the delivery path writes for it; the trace reads:
 *
 * - attempts: the packs from the routing's time on (`attempt#<at>…` sorts by time), filtered on the
 *   event's reference as every attempt record names its events (`{"source":…,"id":…`), at most
 *   MAX_PAGES pages of each of the subscription's attempt shards (ATTEMPT_SHARDS); a busy
 *   subscription's history past that is reported incomplete.
 * - dead letters: those the routing left, `dead#<createdAt>#…` with the routing's `createdAt`, whose
 *   events name this one.
 */
import { type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { EventText } from '../core/cloudevents/event-text.js';
import type { AttemptRecord, DeadLetter } from '../core/delivery/delivery-records.js';
import type { EventIdentity } from '../core/routing/routed-events.js';
import type { EventDeliveries, EventDeliveryReader } from '../core/trace/event-deliveries.js';
import { recordsOf } from './dynamodb-attempt-history.js';
import {
  ATTEMPT,
  ATTEMPT_SHARDS,
  DEAD,
  PK,
  SK,
  attemptPartition,
  partition,
  type Item,
} from './delivery-table-items.js';

/** Pages of attempt packs one trace reads per subscription (each at most 1 MB, DynamoDB's page). */
const MAX_PAGES = 3;

export class DynamoDbEventDeliveries implements EventDeliveryReader {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async deliveriesOf(subscriptionId: string, event: EventIdentity, routedAt: number): Promise<EventDeliveries> {
    const [{ attempts, complete }, deadLetters] = await Promise.all([
      this.attempts(subscriptionId, event, routedAt),
      this.deadLetters(subscriptionId, event, routedAt),
    ]);
    return { attempts, deadLetters, complete };
  }

  private async attempts(
    subscriptionId: string,
    event: EventIdentity,
    routedAt: number,
  ): Promise<{ attempts: AttemptRecord[]; complete: boolean }> {
    // How an attempt record spells the event (EventReference: source, id, type, in that order).
    const needle = `{"source":${JSON.stringify(event.source)},"id":${JSON.stringify(event.id)},`;
    const attempts: AttemptRecord[] = [];
    const shards = await Promise.all(
      Array.from({ length: ATTEMPT_SHARDS }, (_, shard) =>
        this.shardAttempts(subscriptionId, shard, event, needle, routedAt),
      ),
    );
    for (const shard of shards) attempts.push(...shard.attempts);
    const complete = shards.every((shard) => shard.complete);
    attempts.sort((a, b) => (a.at === b.at ? a.attempt - b.attempt : a.at < b.at ? -1 : 1));
    return { attempts, complete };
  }

  private async shardAttempts(
    subscriptionId: string,
    shard: number,
    event: EventIdentity,
    needle: string,
    routedAt: number,
  ): Promise<{ attempts: AttemptRecord[]; complete: boolean }> {
    const attempts: AttemptRecord[] = [];
    let start: Item | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          FilterExpression: 'contains(#records, :needle) OR contains(#record, :needle)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#records': 'records', '#record': 'record' },
          ExpressionAttributeValues: {
            ':pk': { S: attemptPartition(subscriptionId, shard) },
            ':from': { S: `${ATTEMPT}${new Date(routedAt).toISOString()}` },
            ':to': { S: `${ATTEMPT}~` },
            ':needle': { S: needle },
          },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of result.Items ?? []) {
        attempts.push(
          ...recordsOf(item, subscriptionId).filter((record) =>
            record.events?.some(({ source, id }) => source === event.source && id === event.id),
          ),
        );
      }
      start = result.LastEvaluatedKey;
      if (start === undefined) break;
    }
    return { attempts, complete: start === undefined };
  }

  private async deadLetters(
    subscriptionId: string,
    event: EventIdentity,
    routedAt: number,
  ): Promise<Omit<DeadLetter, 'events'>[]> {
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: {
          ':pk': { S: partition(subscriptionId) },
          ':prefix': { S: `${DEAD}${String(routedAt).padStart(15, '0')}#` },
        },
      }),
    );
    return (result.Items ?? [])
      .filter((item) =>
        (item['events']?.L ?? []).some((text) => {
          const named = new EventText(text.S ?? '{}');
          return named.source === event.source && named.id === event.id;
        }),
      )
      .map((item) => JSON.parse(item['deadLetter']?.S ?? '{}') as Omit<DeadLetter, 'events'>);
  }
}
