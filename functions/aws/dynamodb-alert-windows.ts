/**
 * `AlertWindows` (core/alerts/send-alerts.ts) in the `idempotency` table, whose TTL removes what
 * has run out: one item per (contact, subscription, kind) rate window, claimed with one
 * conditional write, and one counter per subscription and hour of its dead letters. Every
 * condition compares `until` with the time itself, so an item the TTL has not yet removed (or
 * that dynalite never removes) counts as ended.
 */
import { ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AlertWindows } from '../core/alerts/send-alerts.js';

const SENT = 'sent';
/** Kept a day past its end, so a late retry of a sent alert still finds it sent. */
const KEEP_SECONDS = 24 * 3600;

export class DynamoDbAlertWindows implements AlertWindows {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async claim(key: string, holder: string, now: number, until: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: { S: key } },
          UpdateExpression: 'SET holder = :holder, #until = :until, expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(pk) OR #until <= :now OR holder = :holder',
          ExpressionAttributeNames: { '#until': 'until' },
          ExpressionAttributeValues: {
            ':holder': { S: holder },
            ':until': { N: String(until) },
            ':now': { N: String(now) },
            ':expires': { N: String(Math.ceil(until / 1000) + KEEP_SECONDS) },
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  async markSent(key: string, holder: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: { S: key } },
          UpdateExpression: 'SET holder = :sent',
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeValues: { ':sent': { S: `${SENT}:${holder}` }, ':holder': { S: holder } },
        }),
      );
    } catch (error) {
      // Another alert took the window after ours ended: nothing of ours left to mark.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async count(key: string, n: number, until: number): Promise<number> {
    const result = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: { pk: { S: key } },
        UpdateExpression: 'ADD #count :n SET expiresAt = :expires',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: {
          ':n': { N: String(n) },
          ':expires': { N: String(Math.ceil(until / 1000) + KEEP_SECONDS) },
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(result.Attributes?.['count']?.N ?? n);
  }
}
