/**
 * What the delivery side tells as Koerier's operational events (core/operations, issue 13 item 3):
 * a subscription suspended, resumed or retired, a delivery dead-lettered, its dead letters no
 * longer empty. Pure builders; the dispatcher and delivery-admin.ts call `tell` with them after the
 * change is stored.
 *
 * Not told: dead letters parked because the subscription is not active (the suspension or
 * retirement was told, and a suspended subscription would otherwise send one event per routed
 * event), deliveries withheld because the owner is no longer entitled to their events or the
 * filters no longer match them (nothing failed; telling would name events the owner may no longer
 * have, or repeat the owner's own change), and dead letters of deliveries that carry operational events themselves: an operator
 * whose own webhook fails would otherwise be told about it through the same webhook, whose failure
 * would be told again, without end.
 */
import { API_BASE_PATH } from '../http/api-version.js';
import { readStoredEvent } from '../cloudevents/index.js';
import { isOperationalType, operationalEventTypes, type OperationalNotice } from '../operations/operational-events.js';
import { tell } from '../operations/operational-events.js';
import type { Clock } from '../ports/clock.js';
import type { Subscription, SuspensionCause } from '../subscriptions/subscription.js';
import type { DeadLetter } from './delivery-records.js';
import type { DispatcherDependencies } from './dispatch-ports.js';
import { eventReferences } from './delivery-views.js';

type Owned = Pick<Subscription, 'id' | 'owner'>;

const PARKED: ReadonlySet<DeadLetter['reason']> = new Set([
  'subscription-suspended',
  'subscription-retired',
  'subscription-not-active',
  'not-entitled',
  'no-longer-matches',
]);

export function suspendedNotice(
  subscription: Owned,
  reason: string,
  cause: SuspensionCause,
  since: number,
  now: number,
): OperationalNotice {
  return {
    type: operationalEventTypes.subscriptionSuspended,
    subscription: { id: subscription.id, owner: subscription.owner },
    // One suspension is one occurrence, whichever instance noticed it first.
    occurrence: [cause, String(since)],
    time: now,
    data: { status: 'suspended', suspendedFor: cause, reason },
  };
}

export function resumedNotice(
  subscription: Owned & Pick<Subscription, 'version'>,
  by: string,
  redriven: number,
  now: number,
): OperationalNotice {
  return {
    type: operationalEventTypes.subscriptionResumed,
    subscription: { id: subscription.id, owner: subscription.owner },
    occurrence: [String(subscription.version)],
    time: now,
    data: { status: 'active', resumedBy: by, redriven },
  };
}

export function retiredNotice(subscription: Owned, reason: string, now: number): OperationalNotice {
  return {
    type: operationalEventTypes.subscriptionRetired,
    subscription: { id: subscription.id, owner: subscription.owner },
    occurrence: [],
    time: now,
    data: { status: 'retired', reason },
  };
}

/** Whether a dead letter is told at all (see the module comment). */
export function toldDeadLetter(deadLetter: DeadLetter): boolean {
  if (PARKED.has(deadLetter.reason)) return false;
  return !deadLetter.events.some((json) => {
    try {
      return isOperationalType(readStoredEvent(json).type);
    } catch {
      return false;
    }
  });
}

/** The dead letter's notice, and the "no longer empty" one when the subscription had none before. */
export function deadLetterNotices(
  subscription: Owned,
  deadLetter: DeadLetter,
  firstDeadLetter: boolean,
  now: number,
): OperationalNotice[] {
  const owner = { id: subscription.id, owner: subscription.owner };
  const events = eventReferences(deadLetter.events);
  const told: OperationalNotice = {
    type: operationalEventTypes.deliveryDeadLettered,
    subscription: owner,
    occurrence: [deadLetter.deliveryId],
    time: now,
    data: {
      deliveryId: deadLetter.deliveryId,
      reason: deadLetter.reason,
      detail: deadLetter.detail,
      attempts: deadLetter.attempts,
      events,
      ...(deadLetter.redriveOf ? { redriveOf: deadLetter.redriveOf } : {}),
    },
  };
  if (!firstDeadLetter) return [told];
  return [
    {
      type: operationalEventTypes.deadLettersNotEmpty,
      subscription: owner,
      occurrence: [deadLetter.deliveryId],
      time: now,
      data: {
        firstDeliveryId: deadLetter.deliveryId,
        deadLetters: `${API_BASE_PATH}/subscriptions/${subscription.id}/dead-letters`,
      },
    },
    told,
  ];
}

/**
 * One subscription dispatch's dead letters, told: the dead letter's own event, and before the first
 * one the dispatch writes, whether the subscription had any (one read of at most one item).
 */
export class DeadLetterTelling {
  private hadDeadLetters?: Promise<boolean | undefined>;
  private firstTold = false;

  constructor(
    private readonly subscriptionId: string,
    private readonly deps: Pick<DispatcherDependencies, 'operations' | 'deadLetters' | 'log'>,
    private readonly now: Clock,
  ) {}

  /** Writes the dead letter with `put`, then tells of it if it is to be told (`subscription`: known once the gate let it through). */
  async put(deadLetter: DeadLetter, subscription: Owned | undefined, put: () => Promise<void>): Promise<void> {
    const told = this.deps.operations !== undefined && subscription !== undefined && toldDeadLetter(deadLetter);
    // Read before the first write of this dispatch, and awaited by every write, so it never sees one of ours.
    const hadBefore = told ? await (this.hadDeadLetters ??= this.anyDeadLetters()) : undefined;
    // Concurrent writers all read `false`: only the first to get here is the first dead letter.
    const first = hadBefore === false && !this.firstTold;
    if (first) this.firstTold = true;
    await put();
    if (told)
      await tell(this.deps.operations, deadLetterNotices(subscription, deadLetter, first, this.now()), this.deps.log);
    // Not an event (see above), but the owner's alert contacts hear that the entitlement is gone (issue 30 item 3).
    else if (deadLetter.reason === 'not-entitled' && subscription !== undefined)
      await this.deps.operations?.alertOnly?.(deadLetterNotices(subscription, deadLetter, false, this.now()));
  }

  /** Undefined when it cannot be told: then no "no longer empty" event rather than a wrong one. */
  private async anyDeadLetters(): Promise<boolean | undefined> {
    try {
      const page = await this.deps.deadLetters.listDeadLetters?.(this.subscriptionId, { limit: 1 });
      return page === undefined ? undefined : page.items.length > 0;
    } catch (error) {
      this.deps.log.warn('dead letters not read', {
        subscriptionId: this.subscriptionId,
        error: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    }
  }
}
