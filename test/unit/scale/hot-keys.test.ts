/**
 * Issue 35, "no hot keys": the items one publisher or one subscriber drives, at 10,000 events a
 * second, against DynamoDB's 1,000 write units a second per partition
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html).
 * The real key builders and adapters run against a DynamoDB stand-in that only counts writes per
 * key; the spread is printed, so a run shows it.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { ATTEMPT_SHARDS } from '../../../functions/aws/delivery-table-items.js';
import { attemptPackWrites } from '../../../functions/aws/dynamodb-attempt-history.js';
import { idempotencyKeyOf } from '../../../functions/aws/dynamodb-idempotency-store.js';
import { DynamoDbRateWindow } from '../../../functions/aws/dynamodb-rate-window.js';
import type { AttemptRecord } from '../../../functions/core/delivery/delivery-records.js';

const PARTITION_WRITE_UNITS = 1_000;
const EVENTS_PER_SECOND = 10_000;
const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';

/** Write units of an item as DynamoDB bills them: one per started kilobyte of names and values. */
function writeUnits(item: Record<string, { S?: string; N?: string }>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += name.length + Buffer.byteLength(value.S ?? value.N ?? '');
  return Math.max(1, Math.ceil(bytes / 1024));
}

function spread(units: Map<string, number>): { keys: number; busiest: number } {
  return { keys: units.size, busiest: Math.max(...units.values()) };
}

describe('issue 35: no hot keys at 10,000 events a second', () => {
  it('issue 35 no hot keys: one subscriber receiving 10,000 events/s writes its attempt history over 8 partitions, each under 1,000 write units/s', () => {
    const subscriptionId = randomUUID();
    const start = Date.UTC(2026, 10, 29, 12, 0, 0);
    const perPartition = new Map<string, number>();
    // One second of deliveries in batches of ten, as the delivery function records them.
    for (let batch = 0; batch < EVENTS_PER_SECOND / 10; batch++) {
      const records: AttemptRecord[] = Array.from({ length: 10 }, (_, n) => ({
        subscriptionId,
        deliveryId: randomUUID(),
        attempt: 1,
        at: new Date(start + batch + n / 10).toISOString(),
        outcome: 'delivered' as const,
        status: 204,
        latencyMs: 40,
        events: [{ source: SOURCE, id: randomUUID(), type: 'nl.edu.leerling.ingeschreven.v1' }],
      }));
      for (const write of attemptPackWrites(records, start / 1000 + 3600)) {
        const item = write.PutRequest!.Item! as Record<string, { S?: string; N?: string }>;
        const pk = item['pk']!.S!;
        perPartition.set(pk, (perPartition.get(pk) ?? 0) + writeUnits(item));
      }
    }
    const { keys, busiest } = spread(perPartition);
    const total = [...perPartition.values()].reduce((a, b) => a + b, 0);
    process.stdout.write(
      `one subscriber, ${EVENTS_PER_SECOND} deliveries/s: ${total} write units/s of attempt history over ${keys} partitions, the busiest ${busiest}\n`,
    );
    // On one partition, as before the spread, this subscriber alone would pass the limit.
    expect(total).toBeGreaterThan(PARTITION_WRITE_UNITS);
    expect(keys).toBe(ATTEMPT_SHARDS);
    expect(busiest).toBeLessThan(PARTITION_WRITE_UNITS);
  });

  it('issue 35 no hot keys: one publisher sending 10,000 single events/s through 700 ingest containers: distinct idempotency keys and routed markers, its rate window under 1,000 writes/s', async () => {
    const writesPerKeyAndSecond = new Map<string, number>();
    let now = Date.UTC(2026, 10, 29, 12, 0, 55);
    const counting = {
      send: async (command: { input: { Key: Record<string, { S: string }> } }) => {
        const key = `${command.input.Key['pk']!.S}@${Math.floor(now / 1000)}`;
        writesPerKeyAndSecond.set(key, (writesPerKeyAndSecond.get(key) ?? 0) + 1);
        return {};
      },
    } as unknown as DynamoDBClient;
    // A limit that lets this publisher send 10,000 a second (koerier:publishRatePerMinute).
    const limit = EVENTS_PER_SECOND * 60;
    const containers = Array.from(
      { length: 700 },
      () => new DynamoDbRateWindow(counting, 'idempotency', { clock: () => now }),
    );
    const idempotencyKeys = new Set<string>();
    const markers = new Set<string>();
    // Ten seconds, across a minute's boundary (where every container starts a new window's lease).
    for (let request = 0; request < EVENTS_PER_SECOND * 10; request++) {
      now = Date.UTC(2026, 10, 29, 12, 0, 55) + request / 10;
      expect(await containers[request % containers.length]!.take('dev-publisher', limit)).toEqual({ allowed: true });
      idempotencyKeys.add(
        idempotencyKeyOf({ clientId: 'dev-publisher', operation: 'POST /events', key: randomUUID() }),
      );
      markers.add(`routed#${SOURCE}#${randomUUID()}`);
    }
    const busiest = Math.max(...writesPerKeyAndSecond.values());
    const windowWrites = [...writesPerKeyAndSecond.values()].reduce((a, b) => a + b, 0);
    process.stdout.write(
      `one publisher, ${EVENTS_PER_SECOND} requests/s for 10 s through 700 containers: ${windowWrites} rate-window writes, ` +
        `at most ${busiest} on one key in one second; ${idempotencyKeys.size} idempotency keys and ${markers.size} routed markers, one write each\n`,
    );
    expect(busiest).toBeLessThan(PARTITION_WRITE_UNITS);
    expect(idempotencyKeys.size).toBe(EVENTS_PER_SECOND * 10);
    expect(markers.size).toBe(EVENTS_PER_SECOND * 10);
  });
});
