/**
 * Pull delivery's capacity caps on the laptop host (docs/PULL.md, "Capacity"): concurrent long
 * polls per subscription and per client are counted in DynamoDB, so the cap holds across Lambda
 * containers; beyond it a long poll is answered 429 with Retry-After, and a slot frees as soon as
 * a poll ends.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { settingEnv } from '../../functions/config.js';
import { boundedKey, DYNAMODB_LIMITS } from '../../functions/core/ids/bounded-key.js';
import { localName } from '../../functions/config/resources.js';
import { apiAs, publishEvent, type KoerierClient } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { eventually } from '../support/waiting.js';

let koerier: TestHost;
let consumer: string;
let publisher: KoerierClient;
const EXAMPLE = { source: 'urn:nld:oin:00000001234567890000:systeem:cap', data: {} };

beforeAll(async () => {
  koerier = await startTestHost({
    [settingEnv.pullMaxPollsPerSubscription]: '2',
    [settingEnv.pullMaxPollsPerClient]: '3',
  });
  consumer = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
  publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
});

afterAll(async () => {
  await koerier?.stop();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${koerier.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${consumer}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function pullSubscription(): Promise<{ id: string; type: string }> {
  const type = `nl.example.capacity.${randomUUID().slice(0, 8)}.v1`;
  const created = await apiAs(koerier.url, consumer).POST('/subscriptions', {
    body: { delivery: 'pull', types: [type] },
  });
  expect(created.response.status).toBe(201);
  return { id: created.data!.id, type };
}

/** Slots of a scope held right now (their leases not run out). */
async function heldSlots(scope: string): Promise<number> {
  const { Items = [] } = await koerier.host.awsClients.dynamodb.send(
    new QueryCommand({
      TableName: localName.table('deliveries'),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: boundedKey('polls', [scope], DYNAMODB_LIMITS.partitionKeyBytes) } },
      ConsistentRead: true,
    }),
  );
  return Items.filter((item) => Number(item['leaseUntil']?.N) > Date.now()).length;
}

const longPoll = (id: string) => post(`/subscriptions/${id}/events/receive`, { waitseconds: 20 });

describe('capacity (CARD-7, EDU-17)', () => {
  it('EDU-17: beyond the long polls allowed per subscription and per client, a long poll is 429 with Retry-After; a short poll is not capped; a slot frees when its poll ends', async () => {
    const first = await pullSubscription();
    const second = await pullSubscription();
    const waiting = [longPoll(first.id), longPoll(first.id)];
    await eventually('both long polls holding their slots', async () => (await heldSlots(`sub#${first.id}`)) === 2);
    const refused = await longPoll(first.id);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await refused.json()) as { detail: string }).detail).toContain('this subscription');
    // A short poll holds no slot.
    expect((await post(`/subscriptions/${first.id}/events/receive`, { waitseconds: 0 })).status).toBe(200);
    // The client's third long poll (on another subscription) fits; its fourth does not.
    waiting.push(longPoll(second.id));
    await eventually(
      'three long polls of the client holding their slots',
      async () => (await heldSlots('client#dev-subscriber')) === 3,
    );
    const overClient = await longPoll(second.id);
    expect(overClient.status).toBe(429);
    expect(((await overClient.json()) as { detail: string }).detail).toContain('this client');
    // Events end the waiting polls; their slots are given back.
    await publishEvent(publisher, { ...EXAMPLE, type: first.type });
    await publishEvent(publisher, { ...EXAMPLE, type: first.type });
    await publishEvent(publisher, { ...EXAMPLE, type: second.type });
    expect((await Promise.all(waiting)).map((response) => response.status)).toEqual([200, 200, 200]);
    expect(await heldSlots(`sub#${first.id}`)).toBe(0);
    expect(await heldSlots('client#dev-subscriber')).toBe(0);
    await publishEvent(publisher, { ...EXAMPLE, type: first.type });
    expect((await longPoll(first.id)).status).toBe(200);
  });
});
