/**
 * DynamoDB's Time to Live for the laptop: dynalite never deletes expired items, so without this
 * the tables functions/config/resources.ts gives a `ttlAttribute` (idempotency records, delivery history, dead
 * letters) grow for as long as the host runs. The handlers already treat an item past its expiry
 * as absent (docs/ARCHITECTURE.md); this only reclaims the space, as AWS does in the background.
 *
 * It walks each such table with Scan, one page per tick, and deletes what expired, each delete
 * conditional on the item still being expired (it may have been renewed since the Scan). After a
 * full pass over a table it waits `passPauseMs` before the next. The pace is bounded — one page
 * per table per tick — so a large table costs a steady trickle, never a burst.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  ScanCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { localName, tables, type TableName } from '../functions/config/resources.js';

export interface TtlSweeperOptions {
  readonly client: DynamoDBClient;
  /** Between two pages of one table. Default 1000. */
  readonly tickMs?: number;
  /** Items read per Scan page. Default 500. */
  readonly pageSize?: number;
  /** After a table's full pass, before its next. Default 60 000. */
  readonly passPauseMs?: number;
  readonly log?: ((line: string) => void) | undefined;
  /** The sweeper's clock, epoch seconds (tests). */
  readonly nowSeconds?: () => number;
  /** False: sweep only when `sweepAll` is called, never on a timer. Default true. */
  readonly periodic?: boolean;
}

export interface TtlSweeper {
  /** Runs one full pass over every TTL table now; resolves with the number of items deleted. */
  sweepAll(): Promise<number>;
  /** Items deleted since start, per local table name. */
  readonly deleted: Readonly<Record<string, number>>;
  stop(): Promise<void>;
}

interface TableCursor {
  readonly table: string;
  readonly ttlAttribute: string;
  readonly keyNames: readonly string[];
  startKey: Record<string, AttributeValue> | undefined;
  pausedUntil: number;
}

export function startTtlSweeper(options: TtlSweeperOptions): TtlSweeper {
  const tickMs = options.tickMs ?? 1000;
  const pageSize = options.pageSize ?? 500;
  const passPauseMs = options.passPauseMs ?? 60_000;
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const deleted: Record<string, number> = {};
  const cursors: TableCursor[] = (Object.keys(tables) as TableName[]).flatMap((name) => {
    const spec = tables[name] as (typeof tables)[TableName] & { ttlAttribute?: string; sortKey?: { name: string } };
    if (!spec.ttlAttribute) return [];
    return [
      {
        table: localName.table(name),
        ttlAttribute: spec.ttlAttribute,
        keyNames: [spec.partitionKey.name, ...(spec.sortKey ? [spec.sortKey.name] : [])],
        startKey: undefined,
        pausedUntil: 0,
      },
    ];
  });

  /** One Scan page of `cursor`'s table; deletes the expired items on it. Returns the number deleted and whether the pass ended. */
  const sweepPage = async (cursor: TableCursor): Promise<{ removed: number; passEnded: boolean }> => {
    const now = nowSeconds();
    const names: Record<string, string> = { '#ttl': cursor.ttlAttribute };
    cursor.keyNames.forEach((name, index) => (names[`#k${index}`] = name));
    const page = await options.client.send(
      new ScanCommand({
        TableName: cursor.table,
        Limit: pageSize,
        ExclusiveStartKey: cursor.startKey,
        // Only numbers are TTL values, as in DynamoDB: an item with a string there never expires.
        FilterExpression: '#ttl < :now',
        ProjectionExpression: cursor.keyNames.map((_, index) => `#k${index}`).join(', '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':now': { N: String(now) } },
      }),
    );
    let removed = 0;
    for (const key of page.Items ?? []) {
      try {
        await options.client.send(
          new DeleteItemCommand({
            TableName: cursor.table,
            Key: key,
            ConditionExpression: '#ttl < :now',
            ExpressionAttributeNames: { '#ttl': cursor.ttlAttribute },
            ExpressionAttributeValues: { ':now': { N: String(now) } },
          }),
        );
        removed += 1;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    deleted[cursor.table] = (deleted[cursor.table] ?? 0) + removed;
    cursor.startKey = page.LastEvaluatedKey;
    return { removed, passEnded: cursor.startKey === undefined };
  };

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // One piece of work at a time: ticks and sweepAll share the cursors.
  let running: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = running.then(work, work);
    running = next.catch(() => undefined);
    return next;
  };

  const tick = async () => {
    for (const cursor of cursors) {
      if (stopped || Date.now() < cursor.pausedUntil) continue;
      try {
        const { passEnded } = await sweepPage(cursor);
        if (passEnded) cursor.pausedUntil = Date.now() + passPauseMs;
      } catch (error) {
        options.log?.(
          JSON.stringify({
            level: 'warn',
            time: new Date().toISOString(),
            message: 'TTL sweep failed; retried on the next tick',
            table: cursor.table,
            error: String(error),
          }),
        );
        cursor.startKey = undefined;
      }
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void exclusive(tick).finally(schedule);
    }, tickMs);
    timer.unref();
  };
  if (options.periodic !== false) schedule();

  return {
    deleted,
    sweepAll: () =>
      exclusive(async () => {
        let total = 0;
        for (const cursor of cursors) {
          cursor.startKey = undefined;
          for (let passEnded = false; !passEnded;) {
            const page = await sweepPage(cursor);
            total += page.removed;
            passEnded = page.passEnded;
          }
        }
        return total;
      }),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
