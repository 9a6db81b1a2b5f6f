/**
 * WH-6 says the sender keeps to the rate the target allowed — not each delivery function instance
 * on its own. Koerier keeps the next free send slot in the deliveries table and instances move it
 * forward with a conditional write (functions/aws/dynamodb-delivery-state.ts). These tests run
 * two repositories (two instances) against one table on dynalite and prove the slot is shared:
 * one reservation per slot, and what one instance reserved the other, or a fresh one, sees. The
 * breaker's half-open probe (EDU-12) is shared the same way: one per cool-down.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbDeliveryState } from '../../functions/aws/dynamodb-delivery-state.js';
import { planSends } from '../../functions/core/delivery/target-health.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

let emulators: Emulators;
let instance: () => DynamoDbDeliveryState;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false }); // fixed clocks in the past: no sweeping by real time
  const client = () =>
    new DynamoDBClient({
      region: emulators.region,
      endpoint: emulators.endpoints.dynamodb,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  const table = emulators.resourceEnvironment[resourceEnv.table('deliveries')]!;
  instance = () => new DynamoDbDeliveryState(client(), table);
});
afterAll(async () => {
  await emulators?.stop();
});

describe('the rate slot is shared by every delivery instance', () => {
  it('WH-6: two instances reserving from the same stored slot: exactly one wins, and the other reads the slot the winner took', async () => {
    const subscriptionId = randomUUID();
    const [a, b] = [instance(), instance()];
    const now = Date.now();
    expect(await a.reserveSendSlots(subscriptionId, undefined, now + 500)).toBe(true);

    const seen = (await b.getTarget(subscriptionId)).nextSendAt;
    expect(seen).toBe(now + 500);
    const results = await Promise.all([
      a.reserveSendSlots(subscriptionId, seen, now + 1000),
      b.reserveSendSlots(subscriptionId, seen, now + 1500),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results[0] ? now + 1000 : now + 1500;
    expect((await a.getTarget(subscriptionId)).nextSendAt).toBe(winner);
    expect((await b.getTarget(subscriptionId)).nextSendAt).toBe(winner);
  });

  it('WH-6: a reservation from a stale slot fails, so an instance can never send in a slot another one already used', async () => {
    const subscriptionId = randomUUID();
    const [a, b] = [instance(), instance()];
    const now = Date.now();
    expect(await a.reserveSendSlots(subscriptionId, undefined, now + 500)).toBe(true);
    expect(await b.reserveSendSlots(subscriptionId, undefined, now + 500)).toBe(false);
    expect(await a.reserveSendSlots(subscriptionId, now + 500, now + 1000)).toBe(true);
    expect(await b.reserveSendSlots(subscriptionId, now + 500, now + 1000)).toBe(false);
  });

  it('WH-6: instances planning in turn from the stored slot space all their sends by the allowed rate', async () => {
    const subscriptionId = randomUUID();
    const ratePerMinute = 120; // one request every 500 ms
    const now = Date.now();
    const sendTimes: number[] = [];
    // Six instances (each a cold start reading the table), each with two deliveries.
    for (let i = 0; i < 6; i++) {
      const repository = instance();
      for (;;) {
        const stored = (await repository.getTarget(subscriptionId)).nextSendAt;
        const plan = planSends({ count: 2, now, ratePerMinute, nextSendAt: stored, horizonMs: 60_000 });
        if (await repository.reserveSendSlots(subscriptionId, stored, plan.nextSendAt!)) {
          sendTimes.push(...plan.admitted.map((wait) => now + wait));
          break;
        }
      }
    }
    sendTimes.sort((x, y) => x - y);
    expect(sendTimes).toHaveLength(12);
    for (let i = 1; i < sendTimes.length; i++) expect(sendTimes[i]! - sendTimes[i - 1]!).toBeGreaterThanOrEqual(500);
  });
});

describe('the half-open probe is shared by every delivery instance', () => {
  it('EDU-12: one probe per cool-down: refused while another instance holds it, and refused to an instance that read the target before the failed probe was recorded', async () => {
    const subscriptionId = randomUUID();
    const [a, b] = [instance(), instance()];
    const now = Date.now();
    const opened = await a.recordTargetFailures(subscriptionId, 5, now - 60_000, false);
    const stale = await b.getTarget(subscriptionId);
    expect(stale.lastFailureAt).toBe(opened.lastFailureAt);

    expect(await a.takeProbe(subscriptionId, now, now + 30_000, opened.lastFailureAt!)).toBe(true);
    expect(await b.takeProbe(subscriptionId, now, now + 30_000, stale.lastFailureAt!)).toBe(false);
    // The probe failed: its outcome releases the lease and starts a new cool-down. B, still on what
    // it read before, must not probe the cool-down that just began.
    const reopened = await a.recordTargetFailures(subscriptionId, 1, now + 100, true);
    expect(reopened.probeUntil).toBeUndefined();
    expect(await b.takeProbe(subscriptionId, now + 200, now + 30_200, stale.lastFailureAt!)).toBe(false);
    // Once that cool-down is over, the instance that reads it takes the next probe.
    expect(await b.takeProbe(subscriptionId, now + 200, now + 30_200, reopened.lastFailureAt!)).toBe(true);
  });

  it('EDU-12: a release ends only the lease it names: a probe that told nothing frees the target, a late release of an older lease frees nothing', async () => {
    const subscriptionId = randomUUID();
    const [a, b] = [instance(), instance()];
    const now = Date.now();
    const { lastFailureAt } = await a.recordTargetFailures(subscriptionId, 5, now - 60_000, false);
    expect(await a.takeProbe(subscriptionId, now, now + 30_000, lastFailureAt!)).toBe(true);
    await a.releaseProbe(subscriptionId, now + 30_000);
    expect((await b.getTarget(subscriptionId)).probeUntil).toBeUndefined();
    expect(await b.takeProbe(subscriptionId, now + 10, now + 30_010, lastFailureAt!)).toBe(true);
    await a.releaseProbe(subscriptionId, now + 30_000);
    expect((await a.getTarget(subscriptionId)).probeUntil).toBe(now + 30_010);
    expect(await a.takeProbe(subscriptionId, now + 20, now + 30_020, lastFailureAt!)).toBe(false);
  });

  it('EDU-12: a lease that has ended may be taken again, for the same cool-down (its holder died before the outcome)', async () => {
    const subscriptionId = randomUUID();
    const [a, b] = [instance(), instance()];
    const now = Date.now();
    const opened = await a.recordTargetFailures(subscriptionId, 5, now - 60_000, false);
    expect(await a.takeProbe(subscriptionId, now, now + 30_000, opened.lastFailureAt!)).toBe(true);
    expect(await b.takeProbe(subscriptionId, now + 30_000, now + 60_000, opened.lastFailureAt!)).toBe(false);
    expect(await b.takeProbe(subscriptionId, now + 30_001, now + 60_001, opened.lastFailureAt!)).toBe(true);
  });
});
