/**
 * The publish window's leases sized to the observed rate (issue 15, item 1): a burst reaches its
 * largest lease in a few writes, and neither the limit (EDU-20) nor the cap per container moves.
 * The clock is the test's and moves as a publisher at a given rate would move it; the window is
 * the real DynamoDB adapter on dynalite.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbRateWindow, LEASE_HORIZON_MS, MAX_LEASE_FRACTION } from '../../functions/aws/dynamodb-rate-window.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { countRequests, type RequestCounter } from '../support/request-counter.js';

// 10 s into a clock minute, so a test has 50 s of one window before the next begins.
const START = Date.UTC(2026, 2, 1, 12, 0, 10);

let emulators: Emulators;
let dynamodb: DynamoDBClient;
let writes: RequestCounter;
let tableName: string;
let now: number;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  writes = countRequests(dynamodb);
  tableName = emulators.resourceEnvironment[resourceEnv.table('idempotency')]!;
});

afterAll(async () => {
  dynamodb?.destroy();
  await emulators?.stop();
});

beforeEach(() => {
  now = START;
  writes.reset();
});

const windowOf = () => new DynamoDbRateWindow(dynamodb, tableName, { clock: () => now });

/** `count` requests one after the other, `gapMs` apart on the test's clock; how many were allowed. */
async function publishAtRate(
  window: DynamoDbRateWindow,
  client: string,
  limit: number,
  count: number,
  gapMs: number,
): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < count; i++) {
    if ((await window.take(client, limit)).allowed) allowed++;
    now += gapMs;
  }
  return allowed;
}

describe('issue 15: leases sized to the observed rate', () => {
  it('EDU-20, issue 15: a burst of 4,000 requests at 400/s costs 6 writes where the doubling alone took 12', async () => {
    const client = `client-${randomUUID()}`;
    expect(await publishAtRate(windowOf(), client, 1_000_000, 4000, 2.5)).toBe(4000);
    // 1 + 2 + 4 + 8 + 16 by doubling; the 16 ran out in 40 ms, so the next is 10 s at 400/s: 4,000.
    expect(writes.byOperation).toEqual({ UpdateItemCommand: 6 });
  });

  it('EDU-20: a lease sized to the rate stays within a tenth of the limit, so one container strands no more than before', async () => {
    const client = `client-${randomUUID()}`;
    const limit = 6000;
    const cap = limit * MAX_LEASE_FRACTION;
    // 32 requests at 400/s: 31 slots by doubling, then a lease that 400/s for 10 s would make 4,000.
    expect(await publishAtRate(windowOf(), client, limit, 32, 2.5)).toBe(32);
    // Another container gets exactly what the first did not lease: the first leased 31 + the cap.
    expect(await publishAtRate(windowOf(), client, limit, limit, 0)).toBe(limit - 31 - cap);
  });

  it('EDU-20: a publisher at four times its limit is admitted exactly the limit, reaching the cap in fewer writes than the doubling', async () => {
    const limit = 6000;
    const atRate = windowOf();
    const client = `client-${randomUUID()}`;
    // 5,000 requests at 400/s: 31 slots by doubling (5 writes), then leases of the cap (600): 9 writes.
    expect(await publishAtRate(atRate, client, limit, 5000, 2.5)).toBe(5000);
    expect(writes.total()).toBe(14);
    // The doubling alone: 1 + 2 + … + 512 (10 writes), then 7 leases of the cap.
    writes.reset();
    expect(await publishAtRate(windowOf(), `client-${randomUUID()}`, limit, 5000, 0)).toBe(5000);
    expect(writes.total()).toBe(17);
    // Past the limit the window refuses, at any rate: the last room is leased by the doubling, slot by slot if need be.
    expect(await publishAtRate(atRate, client, limit, 1100, 2.5)).toBe(limit - 5000);
  });

  it('EDU-20: three containers with rate-sized leases admit exactly the limit between them', async () => {
    const client = `client-${randomUUID()}`;
    const windows = [windowOf(), windowOf(), windowOf()];
    let allowed = 0;
    for (let round = 0; round < 1200; round++) {
      const decisions = await Promise.all(windows.map((w) => w.take(client, 3000)));
      allowed += decisions.filter((d) => d.allowed).length;
      now += 5;
    }
    expect(allowed).toBe(3000);
  });

  it('issue 15: near the end of the window a lease reaches only to the window end, not a whole horizon past it', async () => {
    const client = `client-${randomUUID()}`;
    const window = windowOf();
    // 2 s before the window ends, at 400/s: the doubling's 31 slots, then a lease for the 2 s left.
    now = START + 48_000;
    expect(await publishAtRate(window, client, 1_000_000, 31, 2.5)).toBe(31);
    writes.reset();
    const before = now;
    await window.take(client, 1_000_000);
    const leftInWindow = START + 50_000 - before;
    expect(leftInWindow).toBeLessThan(LEASE_HORIZON_MS);
    // The last lease (16 slots) ran out in 40 ms: 400/s, for the time left, not for 10 s (4,000).
    const lease = Math.ceil((16 / 40) * leftInWindow);
    expect(lease).toBeLessThan(4000);
    expect(writes.byOperation).toEqual({ UpdateItemCommand: 1 });
    expect(await publishAtRate(window, client, 1_000_000, lease - 1, 0)).toBe(lease - 1);
    expect(writes.byOperation).toEqual({ UpdateItemCommand: 1 });
    expect(await publishAtRate(window, client, 1_000_000, 1, 0)).toBe(1);
    expect(writes.byOperation).toEqual({ UpdateItemCommand: 2 });
  });

  it('issue 15: a request or two a few ms apart is no rate: a quiet client keeps the small leases of the doubling', async () => {
    const client = `client-${randomUUID()}`;
    expect(await publishAtRate(windowOf(), client, 1_000_000, 15, 1)).toBe(15);
    // 1 + 2 + 4 + 8 = 15 slots in 4 writes; no lease below 16 slots is taken as a rate.
    expect(writes.byOperation).toEqual({ UpdateItemCommand: 4 });
  });
});
