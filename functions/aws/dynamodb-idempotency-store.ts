/**
 * The idempotency store on DynamoDB (CARD-4): one item per (client, operation, key) in the
 * `idempotency` table. Costs per request: a first request 2 calls (conditional PutItem to claim,
 * conditional UpdateItem to complete); a repeat 1 call on AWS, where the failed PutItem returns the
 * existing item (`ReturnValuesOnConditionCheckFailure`), and 2 on dynalite, which ignores that
 * option so the store falls back to a GetItem; a 5xx 2 calls (claim, conditional DeleteItem).
 *
 * A prepared request (the ingest, issue 15) stores its answer with the claim and is confirmed
 * without a write: 1 call. The container remembers the claims it confirmed and serves their
 * repeats as completed; another container sees the entry in progress (409) until its lock expires
 * and then takes it over (core/idempotency/prepared-guard.ts).
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { tables } from '../config/resources.js';
import { boundReadableKey, DYNAMODB_LIMITS } from '../core/ids/bounded-key.js';
import {
  scopeKey,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyEntry,
  type IdempotencyScope,
  type IdempotencyStore,
  type StoredResponse,
} from '../core/idempotency/index.js';

type Item = Record<string, AttributeValue>;

const PK = tables.idempotency.partitionKey.name;
const TTL = tables.idempotency.ttlAttribute;

/** `isClaimable` (core/idempotency/store.ts) as a condition expression. */
const CLAIMABLE =
  'attribute_not_exists(#pk) OR #ttl < :nowSeconds OR (#state = :inProgress AND lockExpiresAt < :now AND fingerprint = :fingerprint)';
const HELD_BY_ME = '#state = :inProgress AND claimId = :claimId';

/** Confirmed claims a container remembers; past this the oldest are forgotten (their repeats wait for the lock). */
const MAX_CONFIRMED = 10_000;

export class DynamoDbIdempotencyStore implements IdempotencyStore {
  /** Table key → claimId of the prepared claims this container confirmed (insertion order is age). */
  private readonly confirmed = new Map<string, string>();

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const key = keyOf(request.scope);
    try {
      const { Attributes: replaced } = await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            ...key,
            state: { S: 'in-progress' },
            fingerprint: { S: request.fingerprint },
            claimId: { S: request.claimId },
            lockExpiresAt: { N: String(request.lockExpiresAt) },
            [TTL]: { N: String(request.expiresAt) },
            ...(request.pending ? responseAttributes(request.pending) : {}),
          },
          ConditionExpression: CLAIMABLE,
          ExpressionAttributeNames: { '#pk': PK, '#ttl': TTL, '#state': 'state' },
          ExpressionAttributeValues: {
            ':nowSeconds': { N: String(Math.floor(request.now / 1000)) },
            ':now': { N: String(request.now) },
            ':inProgress': { S: 'in-progress' },
            ':fingerprint': { S: request.fingerprint },
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          // The entry a claim takes over, if any: a prepared request repeats its effect then (no extra request).
          ReturnValues: 'ALL_OLD',
        }),
      );
      const taken = replaced && entryOf(replaced);
      return taken?.state === 'in-progress' && taken.pending ? { claimed: true, replaced: taken } : { claimed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const item = error.Item ?? (await this.read(key));
      return { claimed: false, existing: item && this.confirmedView(entryOf(item), item) };
    }
  }

  async confirm(scope: IdempotencyScope, claimId: string): Promise<void> {
    const pk = idempotencyKeyOf(scope);
    this.confirmed.delete(pk);
    this.confirmed.set(pk, claimId);
    while (this.confirmed.size > MAX_CONFIRMED) this.confirmed.delete(this.confirmed.keys().next().value as string);
  }

  /** A pending claim this container confirmed is, for its repeats, the completed answer it gave. */
  private confirmedView(entry: IdempotencyEntry, item: Item): IdempotencyEntry {
    if (entry.state !== 'in-progress' || !entry.pending) return entry;
    const pk = item[PK]?.S;
    if (pk === undefined || item.claimId?.S === undefined || this.confirmed.get(pk) !== item.claimId.S) return entry;
    return { state: 'completed', fingerprint: entry.fingerprint, expiresAt: entry.expiresAt, response: entry.pending };
  }

  async complete(scope: IdempotencyScope, claimId: string, response: StoredResponse): Promise<boolean> {
    const { responseStatus, responseHeaders, responseBody } = responseAttributes(response);
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: keyOf(scope),
          UpdateExpression:
            'SET #state = :completed, responseStatus = :status, responseHeaders = :headers, responseBody = :body REMOVE claimId, lockExpiresAt',
          ConditionExpression: HELD_BY_ME,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':completed': { S: 'completed' },
            ':inProgress': { S: 'in-progress' },
            ':claimId': { S: claimId },
            ':status': responseStatus,
            ':headers': responseHeaders,
            ':body': responseBody,
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async release(scope: IdempotencyScope, claimId: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: keyOf(scope),
          ConditionExpression: HELD_BY_ME,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':inProgress': { S: 'in-progress' }, ':claimId': { S: claimId } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  private async read(key: Item): Promise<Item | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    return result.Item;
  }
}

/**
 * `idempotency#<client>#<operation>#<key>` (parts URI-encoded) while it fits DynamoDB's 2,048-byte
 * partition key, its SHA-256 form beyond (a client id comes from a token and may be long): bounded
 * and still one key per (client, operation, key). Keys that fit are the ones stored before.
 */
export function idempotencyKeyOf(scope: IdempotencyScope): string {
  return boundReadableKey(scopeKey(scope), DYNAMODB_LIMITS.partitionKeyBytes);
}

function keyOf(scope: IdempotencyScope): Item {
  return { [PK]: { S: idempotencyKeyOf(scope) } };
}

function responseAttributes(response: StoredResponse): {
  responseStatus: AttributeValue;
  responseHeaders: AttributeValue;
  responseBody: AttributeValue;
} {
  const headers: Item = {};
  for (const [name, value] of Object.entries(response.headers)) headers[name] = { S: value };
  return {
    responseStatus: { N: String(response.status) },
    responseHeaders: { M: headers },
    responseBody: { S: response.body },
  };
}

function responseOf(item: Item): StoredResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(item.responseHeaders?.M ?? {})) headers[name] = value.S ?? '';
  return { status: Number(item.responseStatus?.N), headers, body: item.responseBody?.S ?? '' };
}

function entryOf(item: Item): IdempotencyEntry {
  const fingerprint = item.fingerprint?.S ?? '';
  const expiresAt = Number(item[TTL]?.N);
  if (item.state?.S === 'completed') return { state: 'completed', fingerprint, expiresAt, response: responseOf(item) };
  const lockExpiresAt = Number(item.lockExpiresAt?.N);
  // An in-progress entry with a response is a prepared claim: the answer it will give.
  return {
    state: 'in-progress',
    fingerprint,
    expiresAt,
    lockExpiresAt,
    ...(item.responseStatus ? { pending: responseOf(item) } : {}),
  };
}
