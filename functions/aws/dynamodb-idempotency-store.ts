/**
 * The idempotency store on DynamoDB (CARD-4): one item per (client, operation, key) in the
 * `idempotency` table. Costs per request: a first request 2 calls (conditional PutItem to claim,
 * conditional UpdateItem to complete); a repeat 1 call on AWS, where the failed PutItem returns the
 * existing item (`ReturnValuesOnConditionCheckFailure`), and 2 on dynalite, which ignores that
 * option so the store falls back to a GetItem; a 5xx 2 calls (claim, conditional DeleteItem).
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { tables } from '../../lib/resources.js';
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
const CLAIMABLE = 'attribute_not_exists(#pk) OR #ttl < :nowSeconds OR (#state = :inProgress AND lockExpiresAt < :now AND fingerprint = :fingerprint)';
const HELD_BY_ME = '#state = :inProgress AND claimId = :claimId';

export class DynamoDbIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const key = keyOf(request.scope);
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            ...key,
            state: { S: 'in-progress' },
            fingerprint: { S: request.fingerprint },
            claimId: { S: request.claimId },
            lockExpiresAt: { N: String(request.lockExpiresAt) },
            [TTL]: { N: String(request.expiresAt) },
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
        }),
      );
      return { claimed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const item = error.Item ?? (await this.read(key));
      return { claimed: false, existing: item && entryOf(item) };
    }
  }

  async complete(scope: IdempotencyScope, claimId: string, response: StoredResponse): Promise<boolean> {
    const headers: Item = {};
    for (const [name, value] of Object.entries(response.headers)) headers[name] = { S: value };
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: keyOf(scope),
          UpdateExpression: 'SET #state = :completed, responseStatus = :status, responseHeaders = :headers, responseBody = :body REMOVE claimId, lockExpiresAt',
          ConditionExpression: HELD_BY_ME,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':completed': { S: 'completed' },
            ':inProgress': { S: 'in-progress' },
            ':claimId': { S: claimId },
            ':status': { N: String(response.status) },
            ':headers': { M: headers },
            ':body': { S: response.body },
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
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
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

function entryOf(item: Item): IdempotencyEntry {
  const fingerprint = item.fingerprint?.S ?? '';
  const expiresAt = Number(item[TTL]?.N);
  if (item.state?.S === 'completed') {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(item.responseHeaders?.M ?? {})) headers[name] = value.S ?? '';
    return {
      state: 'completed',
      fingerprint,
      expiresAt,
      response: { status: Number(item.responseStatus?.N), headers, body: item.responseBody?.S ?? '' },
    };
  }
  return { state: 'in-progress', fingerprint, expiresAt, lockExpiresAt: Number(item.lockExpiresAt?.N) };
}
