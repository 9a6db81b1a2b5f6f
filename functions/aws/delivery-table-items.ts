/**
 * The items of the `deliveries` table, as `dynamodb-delivery-state.ts` reads and writes them:
 * their keys, the target item's attributes, and the list cursors.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { tables } from '../../lib/resources.js';
import { InvalidPageCursorError, type DeadLetter } from '../core/delivery/delivery-records.js';
import type { TargetState } from '../core/delivery/target-health.js';

export type Item = Record<string, AttributeValue>;

export const PK = tables.deliveries.partitionKey.name;
export const SK = tables.deliveries.sortKey.name;
export const TARGET = 'target';
export const PROGRESS = 'progress#';
export const ATTEMPT = 'attempt#';
export const DEAD = 'dead#';
export const PARTITION_PREFIX = 'sub#';

export function partition(subscriptionId: string): string {
  return `${PARTITION_PREFIX}${subscriptionId}`;
}

export function key(subscriptionId: string, sortKey: string): Item {
  return { [PK]: { S: partition(subscriptionId) }, [SK]: { S: sortKey } };
}

/** Zero-padded creation time first, so the listing runs oldest delivery first. */
export function deadLetterSortKey(deadLetter: Pick<DeadLetter, 'deliveryId' | 'createdAt'>): string {
  return `${DEAD}${String(deadLetter.createdAt).padStart(15, '0')}#${deadLetter.deliveryId}`;
}

export function num(value: number): AttributeValue {
  return { N: String(value) };
}

export function targetOf(item: Item): TargetState {
  const number = (name: string) => (item[name]?.N === undefined ? undefined : Number(item[name]!.N));
  const throttleRate = number('throttleRate');
  const throttleSince = number('throttleSince');
  const optional = {
    nextSendAt: number('nextSendAt'),
    lastFailureAt: number('lastFailureAt'),
    failingSince: number('failingSince'),
    probeUntil: number('probeUntil'),
    failedProbes: number('failedProbes'),
    throttle: throttleRate === undefined || throttleSince === undefined ? undefined : { ratePerMinute: throttleRate, since: throttleSince },
  };
  return {
    consecutiveFailures: number('consecutiveFailures') ?? 0,
    ...(Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)) as Partial<TargetState>),
  };
}

/** The partition travels in the cursor: a cursor never pages through another subscription. */
export function encodeCursor(lastKey: Item): string {
  return Buffer.from(JSON.stringify({ pk: lastKey[PK]?.S, sk: lastKey[SK]?.S })).toString('base64url');
}

/** Our sort keys are printable ASCII of at most about 120 characters; cursors far below this. */
const MAX_CURSOR_SORT_KEY_BYTES = 256;
/** base64url of the largest `{pk, sk}`: a partition of a 1,024-byte subscription id and such a sort key. */
const MAX_CURSOR_LENGTH = 2048;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * A cursor is exactly `{pk, sk}`: `pk` this subscription's partition, `sk` a printable key of the
 * listed kind (its prefix) and of bounded length. Anything else — garbage, other JSON, another
 * subscription's partition, an oversized or extra member — is refused here, before DynamoDB would
 * answer a ValidationException (a 500) (issue 8, item 10).
 */
export function decodeCursor(cursor: string, subscriptionId: string, prefix: string): Item {
  if (cursor.length <= MAX_CURSOR_LENGTH) {
    try {
      const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).sort().join() === 'pk,sk') {
        const { pk, sk } = value as { pk: unknown; sk: unknown };
        if (
          pk === partition(subscriptionId) &&
          typeof sk === 'string' &&
          sk.startsWith(prefix) &&
          sk.length > prefix.length &&
          sk.length <= MAX_CURSOR_SORT_KEY_BYTES &&
          PRINTABLE_ASCII.test(sk)
        ) {
          return key(subscriptionId, sk);
        }
      }
    } catch {
      // falls through to the error below
    }
  }
  throw new InvalidPageCursorError('the cursor is not one this list handed out');
}
