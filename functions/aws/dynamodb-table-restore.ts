/**
 * The copy step of restoring a table to a point in time (docs/OPERATIONS.md, "Restore a table from
 * a point in time"; issue 31 item 6). DynamoDB's RestoreTableToPointInTime makes a *new* table;
 * the stack's tables keep their CloudFormation-made names, which every function's environment, IAM
 * grant, alarm and dashboard names. So the restored table is not adopted: its items are copied
 * back into the live table, which then holds exactly what it held at that point (unless
 * `keepNewer`), under the same name, with its point-in-time recovery, TTL and grants unchanged.
 *
 * Run by bin/restore-table.ts. Without `apply` it only compares and reports what it would write.
 */
import {
  DescribeTableCommand,
  ScanCommand,
  type AttributeValue,
  type DynamoDBClient,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { batchWriteAll } from './dynamodb-batch-write.js';

type Item = Record<string, AttributeValue>;

export interface TableRestoreRequest {
  /** The table RestoreTableToPointInTime made (or any copy standing in for it). */
  readonly from: string;
  /** The stack's live table. */
  readonly to: string;
  /** Write; without it, only the report of what would be written. */
  readonly apply: boolean;
  /** Keep the live items the restored table lacks (written after the point); default: delete them. */
  readonly keepNewer?: boolean;
}

export interface TableRestoreReport {
  readonly from: string;
  readonly to: string;
  readonly applied: boolean;
  /** Items in both tables alike. */
  readonly unchanged: number;
  /** Items of the restored table the live one lacks or holds otherwise: put back. */
  readonly restored: number;
  /** Live items the restored table lacks: deleted (or kept, with `keepNewer`). */
  readonly removed: number;
  readonly kept: number;
}

export class TableRestoreError extends Error {
  override name = 'TableRestoreError';
}

export async function restoreTableItems(
  dynamodb: DynamoDBClient,
  request: TableRestoreRequest,
): Promise<TableRestoreReport> {
  if (request.from === request.to) throw new TableRestoreError('the restored table and the live table are the same');
  const keys = await keySchemaOf(dynamodb, request.to);
  const restoredKeys = await keySchemaOf(dynamodb, request.from);
  if (JSON.stringify(keys) !== JSON.stringify(restoredKeys)) {
    throw new TableRestoreError(
      `${request.from} has the key ${describeKeys(restoredKeys)} and ${request.to} the key ${describeKeys(keys)}: not a restore of that table`,
    );
  }
  const keyOf = (item: Item) => canonical(Object.fromEntries(keys.map((key) => [key.name, item[key.name]])));
  const earlier = new Map<string, Item>();
  for await (const item of scanAll(dynamodb, request.from)) earlier.set(keyOf(item), item);

  const writes: WriteRequest[] = [];
  let unchanged = 0;
  let removed = 0;
  let kept = 0;
  const seen = new Set<string>();
  for await (const item of scanAll(dynamodb, request.to)) {
    const key = keyOf(item);
    const before = earlier.get(key);
    if (before === undefined) {
      if (request.keepNewer) kept++;
      else {
        removed++;
        writes.push({ DeleteRequest: { Key: Object.fromEntries(keys.map((k) => [k.name, item[k.name]!])) } });
      }
      continue;
    }
    seen.add(key);
    if (canonical(before) === canonical(item)) unchanged++;
    else writes.push({ PutRequest: { Item: before } });
  }
  for (const [key, item] of earlier) if (!seen.has(key)) writes.push({ PutRequest: { Item: item } });
  const restored = writes.length - removed;
  if (request.apply) await batchWriteAll(dynamodb, request.to, writes, `restore of ${request.to}`);
  return { from: request.from, to: request.to, applied: request.apply, unchanged, restored, removed, kept };
}

interface KeyAttribute {
  readonly name: string;
  readonly role: string;
  readonly type: string;
}

async function keySchemaOf(dynamodb: DynamoDBClient, table: string): Promise<KeyAttribute[]> {
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
  const types = new Map((Table?.AttributeDefinitions ?? []).map((d) => [d.AttributeName, d.AttributeType]));
  return (Table?.KeySchema ?? []).map((key) => ({
    name: key.AttributeName ?? '',
    role: key.KeyType ?? '',
    type: types.get(key.AttributeName) ?? '',
  }));
}

const describeKeys = (keys: readonly KeyAttribute[]) => keys.map((k) => `${k.name} (${k.role}, ${k.type})`).join(' + ');

/** Every item, page by page, read consistently (the live table's latest writes count). */
async function* scanAll(dynamodb: DynamoDBClient, table: string): AsyncGenerator<Item> {
  let startKey: Item | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({ TableName: table, ConsistentRead: true, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }),
    );
    yield* page.Items ?? [];
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/**
 * One text per value whatever the order DynamoDB hands maps and sets back in, so two items
 * compare equal exactly when they hold the same attributes.
 */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString('base64'));
  if (typeof value !== 'object' || value === null) return JSON.stringify(value ?? null);
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => {
      const member = record[key];
      // String, number and binary sets are sets: their order means nothing.
      const sorted =
        (key === 'SS' || key === 'NS' || key === 'BS') && Array.isArray(member)
          ? member.map(canonical).sort().join(',')
          : undefined;
      return `${JSON.stringify(key)}:${sorted === undefined ? canonical(member) : `[${sorted}]`}`;
    })
    .join(',')}}`;
}
