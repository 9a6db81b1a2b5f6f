/**
 * A subscription as a DynamoDB item of the `subscriptions` table, and the `byOwner` index's keys:
 * the item mapping, the owner key (hashed when it would not fit) and the list cursor, which is the
 * index's last key handed back as it was, checked before DynamoDB sees it.
 */
import type { AlertContacts } from '../core/subscriptions/alert-contacts.js';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { tables } from '../config/resources.js';
import { DYNAMODB_LIMITS } from '../core/ids/bounded-key.js';
import type { Filter } from '../core/subscriptions/filters.js';
import type { OrderingSettings } from '../core/ordering/ordering-settings.js';
import { InvalidCursorError } from '../core/subscriptions/store.js';
import type {
  Subscription,
  SubscriptionStatus,
  SuspensionCause,
  ZgwAbonnementTerms,
} from '../core/subscriptions/subscription.js';

export type Item = Record<string, AttributeValue>;

export const ID = tables.subscriptions.partitionKey.name;
export const BY_OWNER = tables.subscriptions.globalIndexes[0];
export const OWNER_KEY = BY_OWNER.partitionKey.name;
const CREATED_AT = BY_OWNER.sortKey.name;
/** Where the owner's client id is kept when `owner`, the index key, holds its hash. */
const OWNER_ID = 'ownerId';
const HASHED_OWNER = '#sha256=';

/**
 * Subscription ids Koerier makes are UUIDs (`subscriptionIdOf`); an id is also the route index's
 * sort key (1,024 bytes at most), so a longer one cannot name a subscription.
 */
export const MAX_SUBSCRIPTION_ID_BYTES = DYNAMODB_LIMITS.sortKeyBytes;
/** What a cursor may measure: base64url of the largest key (a 2,048-byte owner, a 1,024-byte id, a time) fits. */
const MAX_CURSOR_LENGTH = 6 * 1024;
/** `createdAt` as Koerier writes it (`Date.toISOString`). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/**
 * The `byOwner` index key for a client id. A client id comes from a token and may be long; an
 * index key holds at most 2,048 bytes (DynamoDB refuses the write beyond; dynalite does not check
 * index keys). So an id that does not fit — or that starts like a hashed one, which keeps the two
 * forms apart — is stored as its SHA-256, with the id itself in `ownerId`.
 */
export function ownerKeyOf(owner: string): string {
  if (Buffer.byteLength(owner) <= DYNAMODB_LIMITS.partitionKeyBytes && !owner.startsWith(HASHED_OWNER)) return owner;
  return `${HASHED_OWNER}${createHash('sha256').update(owner).digest('base64url')}`;
}

export function itemOf(s: Subscription): Item {
  const item: Item = {
    [ID]: { S: s.id },
    [OWNER_KEY]: { S: ownerKeyOf(s.owner) },
    sink: { S: s.sink },
    delivery: { S: s.delivery },
    contentMode: { S: s.contentMode },
    batchSupported: { BOOL: s.batchSupported },
    validation: { S: s.validation },
    status: { S: s.status },
    routeKeys: { L: s.routeKeys.map((key) => ({ S: key })) },
    createdAt: { S: s.createdAt },
    updatedAt: { S: s.updatedAt },
    version: { N: String(s.version) },
  };
  if (item[OWNER_KEY]!.S !== s.owner) item[OWNER_ID] = { S: s.owner };
  if (s.source !== undefined) item['source'] = { S: s.source };
  if (s.types !== undefined) item['types'] = { L: s.types.map((type) => ({ S: type })) };
  if (s.filters !== undefined) item['filters'] = { S: JSON.stringify(s.filters) };
  if (s.credential !== undefined)
    item['credential'] = { M: { kind: { S: s.credential.kind }, ciphertext: { S: s.credential.ciphertext } } };
  if (s.statusReason !== undefined) item['statusReason'] = { S: s.statusReason };
  if (s.suspendedFor !== undefined) item['suspendedFor'] = { S: s.suspendedFor };
  if (s.allowedRatePerMinute !== undefined) item['allowedRatePerMinute'] = { N: String(s.allowedRatePerMinute) };
  if (s.retryWindowSeconds !== undefined) item['retryWindowSeconds'] = { N: String(s.retryWindowSeconds) };
  if (s.signDeliveries === true) item['signDeliveries'] = { BOOL: true };
  if (s.maxInlineBytes !== undefined) item['maxInlineBytes'] = { N: String(s.maxInlineBytes) };
  if (s.alerts !== undefined) item['alerts'] = { S: JSON.stringify(s.alerts) };
  if (s.ordering !== undefined) item['ordering'] = { S: JSON.stringify(s.ordering) };
  if (s.bodyShape !== undefined) item['bodyShape'] = { S: s.bodyShape };
  if (s.zgwAbonnement !== undefined) item['zgwAbonnement'] = { S: JSON.stringify(s.zgwAbonnement) };
  if (s.validationTokenHash !== undefined) item['validationTokenHash'] = { S: s.validationTokenHash };
  if (s.validationExpiresAt !== undefined) item['validationExpiresAt'] = { S: s.validationExpiresAt };
  if (s.pull !== undefined) {
    item['maxDeliveryCount'] = { N: String(s.pull.maxDeliveryCount) };
    item['retentionSeconds'] = { N: String(s.pull.retentionSeconds) };
  }
  return item;
}

export function subscriptionOf(item: Item): Subscription {
  const text = (name: string) => item[name]?.S;
  const number = (name: string) => (item[name]?.N === undefined ? undefined : Number(item[name]!.N));
  const credential = item['credential']?.M;
  const optional = {
    source: text('source'),
    types: item['types']?.L?.map((value) => value.S ?? ''),
    filters: text('filters') === undefined ? undefined : (JSON.parse(text('filters')!) as Filter[]),
    credential: credential && {
      kind: credential['kind']?.S as NonNullable<Subscription['credential']>['kind'],
      ciphertext: credential['ciphertext']?.S ?? '',
    },
    statusReason: text('statusReason'),
    suspendedFor: text('suspendedFor') as SuspensionCause | undefined,
    allowedRatePerMinute: number('allowedRatePerMinute'),
    retryWindowSeconds: number('retryWindowSeconds'),
    signDeliveries: item['signDeliveries']?.BOOL === true ? true : undefined,
    maxInlineBytes: number('maxInlineBytes'),
    alerts: text('alerts') === undefined ? undefined : (JSON.parse(text('alerts')!) as AlertContacts),
    ordering: text('ordering') === undefined ? undefined : (JSON.parse(text('ordering')!) as OrderingSettings),
    bodyShape: text('bodyShape') === 'zgw-notificatie' ? ('zgw-notificatie' as const) : undefined,
    zgwAbonnement:
      text('zgwAbonnement') === undefined ? undefined : (JSON.parse(text('zgwAbonnement')!) as ZgwAbonnementTerms),
    validationTokenHash: text('validationTokenHash'),
    validationExpiresAt: text('validationExpiresAt'),
  };
  return {
    id: text(ID) ?? '',
    owner: text(OWNER_ID) ?? text(OWNER_KEY) ?? '',
    sink: text('sink') ?? '',
    delivery: text('delivery') === 'pull' ? 'pull' : 'push',
    ...(text('delivery') === 'pull'
      ? {
          pull: {
            maxDeliveryCount: number('maxDeliveryCount') ?? 1,
            retentionSeconds: number('retentionSeconds') ?? 60,
          },
        }
      : {}),
    contentMode: (text('contentMode') ?? 'structured') as Subscription['contentMode'],
    batchSupported: item['batchSupported']?.BOOL === true,
    validation: (text('validation') ?? 'handshake') as Subscription['validation'],
    status: (text('status') ?? 'pending') as SubscriptionStatus,
    routeKeys: item['routeKeys']?.L?.map((value) => value.S ?? '') ?? [],
    createdAt: text('createdAt') ?? '',
    updatedAt: text('updatedAt') ?? '',
    version: number('version') ?? 0,
    ...(Object.fromEntries(
      Object.entries(optional).filter(([, value]) => value !== undefined),
    ) as Partial<Subscription>),
  };
}

/** The owner travels inside the cursor so a cursor can never page through another client's list. */
export function encodeCursor(key: Item): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/**
 * A cursor is the `byOwner` query's last key, handed back as it was: exactly the index and table
 * keys (`owner`, `createdAt`, `id`), each a string, of this owner's partition and within the key
 * limits. Anything else — garbage, other JSON, another owner, an oversized or extra attribute —
 * is refused here, before DynamoDB would answer a ValidationException (a 500) (issue 8, item 10).
 */
export function decodeCursor(cursor: string, owner: string): Item {
  if (cursor.length <= MAX_CURSOR_LENGTH) {
    try {
      const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (isCursorOf(key, ownerKeyOf(owner))) return key;
    } catch {
      // falls through to the error below
    }
  }
  throw new InvalidCursorError('the cursor is not one this list handed out');
}

/** The whole-table scan's last key: the table key (`id`) alone, a string within the id limit. */
export function decodeScanCursor(cursor: string): Item {
  if (cursor.length <= MAX_CURSOR_LENGTH) {
    try {
      const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      const id =
        typeof key === 'object' && key !== null && Object.keys(key).join() === ID
          ? (key as Record<string, { S?: unknown }>)[ID]
          : undefined;
      if (
        id &&
        Object.keys(id).join() === 'S' &&
        typeof id.S === 'string' &&
        id.S.length > 0 &&
        Buffer.byteLength(id.S) <= MAX_SUBSCRIPTION_ID_BYTES
      ) {
        return key as Item;
      }
    } catch {
      // falls through to the error below
    }
  }
  throw new InvalidCursorError('the cursor is not one this list handed out');
}

function isCursorOf(key: unknown, ownerKey: string): key is Item {
  if (typeof key !== 'object' || key === null || Array.isArray(key)) return false;
  const names = Object.keys(key).sort();
  if (names.join(',') !== [CREATED_AT, ID, OWNER_KEY].sort().join(',')) return false;
  const text = (name: string): string | undefined => {
    const value: unknown = (key as Record<string, unknown>)[name];
    if (typeof value !== 'object' || value === null || Object.keys(value).join() !== 'S') return undefined;
    const s: unknown = (value as { S: unknown }).S;
    return typeof s === 'string' ? s : undefined;
  };
  const id = text(ID);
  const createdAt = text(CREATED_AT);
  return (
    text(OWNER_KEY) === ownerKey &&
    id !== undefined &&
    id.length > 0 &&
    Buffer.byteLength(id) <= MAX_SUBSCRIPTION_ID_BYTES &&
    createdAt !== undefined &&
    ISO_INSTANT.test(createdAt)
  );
}
