/**
 * Proves that an answer fits one item of the real DynamoDB idempotency store (400 KB, with the
 * longest client id a key may carry) and comes back byte for byte: claims a key, completes it
 * with `response`, and reads it back through a second claim.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { expect } from 'vitest';
import { DynamoDbIdempotencyStore } from '../../functions/aws/dynamodb-idempotency-store.js';
import type { HttpResponse } from '../../functions/core/http/messages.js';
import { resourceNames } from './resource-names.js';

export async function expectFitsOneIdempotencyItem(response: HttpResponse): Promise<void> {
  const store = new DynamoDbIdempotencyStore(new DynamoDBClient({}), resourceNames.table('idempotency'));
  const scope = { clientId: 'c'.repeat(1000), operation: 'POST /events', key: randomUUID() };
  const now = Date.now();
  const claim = {
    scope,
    fingerprint: 'f'.repeat(64),
    claimId: randomUUID(),
    now,
    lockExpiresAt: now + 60_000,
    expiresAt: Math.floor(now / 1000) + 3600,
  };
  expect((await store.claim(claim)).claimed).toBe(true);
  expect(
    await store.complete(scope, claim.claimId, {
      status: response.status,
      headers: { 'content-type': response.headers['content-type']! },
      body: response.body,
    }),
  ).toBe(true);
  const again = await store.claim({ ...claim, claimId: randomUUID() });
  if (again.claimed) expect.fail('the completed entry was not found');
  expect(again.existing).toMatchObject({
    state: 'completed',
    response: { status: response.status, body: response.body },
  });
}
