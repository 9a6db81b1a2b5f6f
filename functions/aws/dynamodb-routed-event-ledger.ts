/**
 * The routed-event ledger in DynamoDB: one marker per routed event, in the idempotency table next
 * to the API's idempotency keys.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { tables } from '../../lib/resources.js';
import { routedEventKey, type ClaimOptions, type EventIdentity, type RoutedEventLedger, type RoutingClaim } from '../core/routing/routed-events.js';

type Item = Record<string, AttributeValue>;

const MARKER_KEY = tables.idempotency.partitionKey.name;
const MARKER_TTL = tables.idempotency.ttlAttribute;

export class DynamoDbRoutedEventLedger implements RoutedEventLedger {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async claim(event: EventIdentity, options: ClaimOptions): Promise<RoutingClaim> {
    const key = { [MARKER_KEY]: { S: routedEventKey(event) } };
    const claimId = randomUUID();
    const lockExpiresAt = String(options.now + options.lockMs);
    const nowSeconds = String(Math.floor(options.now / 1000));
    for (let attempt = 0; attempt < 3; attempt++) {
      const routingId = randomUUID();
      try {
        // Absent, or routed so long ago that it is a new event now (after the TTL, EDU-IDEM-13).
        await this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: {
              ...key,
              state: { S: 'routing' },
              claimId: { S: claimId },
              routingId: { S: routingId },
              lockExpiresAt: { N: lockExpiresAt },
              [MARKER_TTL]: { N: String(Math.floor(options.now / 1000) + options.ttlSeconds) },
            },
            ConditionExpression: 'attribute_not_exists(#pk) OR #ttl < :nowSeconds',
            ExpressionAttributeNames: { '#pk': MARKER_KEY, '#ttl': MARKER_TTL },
            ExpressionAttributeValues: { ':nowSeconds': { N: nowSeconds } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { outcome: 'claimed', claimId, routingId };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        // dynalite ignores ReturnValuesOnConditionCheckFailure; read the marker instead.
        const existing = error.Item ?? (await this.read(key));
        if (!existing) continue;
        if (existing['state']?.S === 'routed') return { outcome: 'duplicate' };
        if (Number(existing['lockExpiresAt']?.N ?? 0) >= options.now) return { outcome: 'busy' };
        // An earlier attempt failed or crashed: take over, keeping its routing id.
        try {
          await this.client.send(
            new UpdateItemCommand({
              TableName: this.tableName,
              Key: key,
              UpdateExpression: 'SET claimId = :claimId, lockExpiresAt = :lock',
              ConditionExpression: '#state = :routing AND claimId = :previous',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: {
                ':claimId': { S: claimId },
                ':lock': { N: lockExpiresAt },
                ':routing': { S: 'routing' },
                ':previous': { S: existing['claimId']?.S ?? '' },
              },
            }),
          );
          return { outcome: 'claimed', claimId, routingId: existing['routingId']?.S ?? routingId };
        } catch (takeoverError) {
          if (!(takeoverError instanceof ConditionalCheckFailedException)) throw takeoverError;
        }
      }
    }
    return { outcome: 'busy' };
  }

  async complete(event: EventIdentity, claimId: string): Promise<void> {
    await this.updateHeld(event, claimId, 'SET #state = :routed REMOVE lockExpiresAt', { ':routed': { S: 'routed' } });
  }

  async abandon(event: EventIdentity, claimId: string): Promise<void> {
    await this.updateHeld(event, claimId, 'SET lockExpiresAt = :expired', { ':expired': { N: '0' } });
  }

  /** A claim another attempt took over is theirs now; losing it here is not an error. */
  private async updateHeld(event: EventIdentity, claimId: string, update: string, values: Item): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [MARKER_KEY]: { S: routedEventKey(event) } },
          UpdateExpression: update,
          ConditionExpression: '#state = :routing AND claimId = :claimId',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ...values, ':routing': { S: 'routing' }, ':claimId': { S: claimId } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  private async read(key: Item): Promise<Item | undefined> {
    return (await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
  }
}
