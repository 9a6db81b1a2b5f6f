/**
 * The routed-event ledger's batch commit against dynalite (functions/aws/dynamodb-routed-event-ledger.ts,
 * issue 15 item 2): a router invocation marks its claims routed with one write, and every
 * guarantee of the per-event marking holds — a repeat within the window is dropped (EDU-IDEM-15,
 * CE-17), a claim never committed (a crash before the deliveries were queued) or released is
 * routed again with the same routing id, so no event is lost and its delivery keys stay the same.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbRoutedEventLedger } from '../../functions/aws/dynamodb-routed-event-ledger.js';
import type { RoutingClaim } from '../../functions/core/routing/routed-events.js';
import { localName } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { countRequests, type RequestCounter } from '../support/request-counter.js';

let emulators: Emulators;
let client: DynamoDBClient;
let ledger: DynamoDbRoutedEventLedger;
let requests: RequestCounter;

beforeAll(async () => {
  emulators = await startEmulators();
  client = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  requests = countRequests(client);
  ledger = new DynamoDbRoutedEventLedger(client, localName.table('idempotency'));
});

afterAll(async () => {
  client.destroy();
  await emulators.stop();
});

const identity = () => ({ source: 'urn:nld:oin:1:systeem:lvs', id: randomUUID() });
const options = (now = Date.now()) => ({ now, lockMs: 10_000, ttlSeconds: 3600 });
const claimed = (claim: RoutingClaim) => {
  if (claim.outcome !== 'claimed') throw new Error(`expected a claim, got ${claim.outcome}`);
  return claim;
};

describe('routed-event ledger, one commit per batch', () => {
  it('EDU-IDEM-15: ten events of one batch are marked routed with one write, and each is a duplicate afterwards', async () => {
    const batch = ledger.batch();
    const events = Array.from({ length: 10 }, identity);
    const claims = await Promise.all(
      events.map(async (event) => ({ event, claimId: claimed(await batch.claim(event, options())).claimId })),
    );
    requests.reset();
    await batch.completeAll(claims);
    expect(requests.byOperation).toEqual({ UpdateItemCommand: 1 });
    for (const event of events) expect(await ledger.claim(event, options())).toEqual({ outcome: 'duplicate' });
    // Also for a later batch.
    for (const event of events) expect(await ledger.batch().claim(event, options())).toEqual({ outcome: 'duplicate' });
  });

  it('EDU-IDEM-15: a claim never committed (the router stopped before queueing) is routed again after its lock, with the same routing id', async () => {
    const event = identity();
    const now = Date.now();
    const first = claimed(await ledger.batch().claim(event, options(now)));
    expect(await ledger.batch().claim(event, options(now))).toEqual({ outcome: 'busy' });
    const retry = claimed(await ledger.batch().claim(event, options(now + 20_000)));
    expect(retry.routingId).toBe(first.routingId);
  });

  it("EDU-IDEM-15: the batch's commit covers only the claims it lists: a released one is routed again at once", async () => {
    const batch = ledger.batch();
    const [routed, failed] = [identity(), identity()];
    const routedClaim = claimed(await batch.claim(routed, options()));
    const failedClaim = claimed(await batch.claim(failed, options()));
    await batch.abandon(failed, failedClaim.claimId);
    await batch.completeAll([{ event: routed, claimId: routedClaim.claimId }]);
    expect(await ledger.claim(routed, options())).toEqual({ outcome: 'duplicate' });
    expect(claimed(await ledger.batch().claim(failed, options())).routingId).toBe(failedClaim.routingId);
  });

  it('CE-17: a late commit of a claim that was taken over does not mark the event routed; the new claim must commit', async () => {
    const event = identity();
    const now = Date.now();
    const slow = ledger.batch();
    const slowClaim = claimed(await slow.claim(event, options(now)));
    const next = ledger.batch();
    const takeover = claimed(await next.claim(event, options(now + 20_000)));
    await slow.completeAll([{ event, claimId: slowClaim.claimId }]);
    expect(await ledger.claim(event, options(now + 20_001))).toEqual({ outcome: 'busy' });
    await next.completeAll([{ event, claimId: takeover.claimId }]);
    expect(await ledger.claim(event, options(now + 20_002))).toEqual({ outcome: 'duplicate' });
  });

  it('EDU-IDEM-13: after the idempotency window the event is new again, commit or not', async () => {
    const batch = ledger.batch();
    const event = identity();
    const now = Date.now();
    await batch.completeAll([{ event, claimId: claimed(await batch.claim(event, options(now))).claimId }]);
    expect((await ledger.batch().claim(event, options(now + 3601 * 1000))).outcome).toBe('claimed');
  });
});
