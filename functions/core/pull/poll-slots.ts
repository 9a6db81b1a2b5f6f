/**
 * Capacity for long polls (issue 10, Build 5): a long poll holds a Lambda container for up to 20 s,
 * so each subscription and each client may have only so many waiting at once, across containers.
 * A slot is a lease in the `PollLeases` port (DynamoDB items with an expiry in AWS), taken before
 * the wait and given back after it; one that a dead container never gave back lapses on its own.
 */
import { randomUUID } from 'node:crypto';
import { KoerierError, problem } from '../http/problems.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { PollLeases } from './pull-queues.js';

/** A poll's slot lapses after this even if its container died: above the pull function's timeout (28 s). */
const LEASE_MS = 35_000;
/** What a refused long poll is told to wait: polls end within 20 s, most much sooner. */
const RETRY_AFTER_SECONDS = 5;

export interface PollSlotDependencies {
  readonly leases: PollLeases;
  readonly clock: Clock;
  readonly log: Log;
}

export interface PollLimits {
  readonly perSubscription: number;
  readonly perClient: number;
}

/**
 * Runs `wait` holding one slot of the subscription and one of the client, or throws the 429
 * (with Retry-After) when either has none free. The slots are given back however `wait` ends.
 */
export async function withPollSlots<T>(
  deps: PollSlotDependencies,
  limits: PollLimits,
  poller: { readonly clientId: string; readonly subscriptionId: string },
  wait: () => Promise<T>,
): Promise<T> {
  const leaseId = randomUUID();
  const now = deps.clock();
  const scopes = [
    { scope: `sub#${poller.subscriptionId}`, limit: limits.perSubscription, what: 'this subscription' },
    { scope: `client#${poller.clientId}`, limit: limits.perClient, what: 'this client' },
  ];
  const held: { scope: string; slot: number }[] = [];
  try {
    for (const { scope, limit, what } of scopes) {
      const slot = await deps.leases.take(scope, limit, leaseId, now, now + LEASE_MS);
      if (slot === undefined) {
        deps.log.info('pull receive refused: too many long polls', {
          subscriptionId: poller.subscriptionId,
          clientId: poller.clientId,
          scope: what,
        });
        throw new KoerierError(
          problem(
            429,
            'too-many-polls',
            `${limit} long polls for ${what} are waiting already; retry later or poll less often at once.`,
          ),
          { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } },
        );
      }
      held.push({ scope, slot });
    }
    return await wait();
  } finally {
    await Promise.all(
      held.map(({ scope, slot }) =>
        deps.leases.give(scope, slot, leaseId).catch((error: unknown) =>
          deps.log.warn('poll lease not released', {
            scope,
            error: error instanceof Error ? error.message : String(error),
          }),
        ),
      ),
    );
  }
}
