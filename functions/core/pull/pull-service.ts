/**
 * Pull delivery's use cases (docs/PULL.md, CARD-7, EDU-17): receive events with a lock, and settle
 * them by lock token — acknowledge, release, renew the lock, reject. The caller (functions/app/
 * pull-app.ts) has already authenticated the client and found its own pull subscription.
 *
 * Receive: first short polls side by side for the whole batch, so events already waiting cost one
 * round and no poll slot; only when that round is empty does the receive take its slots and wait:
 * one long poll for a single message (so it returns as soon as anything is there, on SQS and on the
 * laptop's emulator alike, which ends a long poll only when the batch is full), then short polls to
 * fill up to `maxevents`. An idle consumer pays one extra ReceiveMessage per receive for this
 * (docs/PULL.md, idle cost); a busy one saves a round trip and four DynamoDB writes per receive.
 * Messages received more than `maxdeliverycount` times, or marked by a reject, go to the
 * subscription's dead letters instead, and so do events the owner is no longer entitled to or the
 * subscription's filters no longer match (issue 28, item 9), unsent.
 */
import { lineageOf } from '../delivery-message/delivery-message.js';
import type { HttpResponse } from '../http/messages.js';
import { KoerierError, problems } from '../http/problems.js';
import type { DeadLetterStore } from '../delivery/delivery-records.js';
import type { Metrics } from '../ports/metrics.js';
import { mayReceive } from '../routing/may-receive.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { lockExpiry, sealLockToken, type LockTokenContents } from './lock-token.js';
import { settleLocks, type SettlementDependencies } from './lock-settlement.js';
import { parseReceiveRequest, type ReceiveRequest, type SettleAction } from './pull-requests.js';
import type { PollLeases, PulledMessage } from './pull-queues.js';
import { withPollSlots } from './poll-slots.js';
import { OrderedPull, type LanePlace, type OrderedPullDependencies } from './ordered-pull.js';
import {
  assembleAnswer,
  dispositionOf,
  MAX_ANSWER_BYTES,
  tooLargeToReplay,
  type Disposition,
  type LockView,
} from './receive-assembly.js';

export interface PullDependencies extends SettlementDependencies {
  readonly deadLetters: Pick<DeadLetterStore, 'putDeadLetter'>;
  /** Counts each dead letter, as the push dispatcher does: one metrics path for every dead letter (issue 29, item 3). */
  readonly metrics: Pick<Metrics, 'deadLettered'>;
  /** How long a dead letter is kept (the push setting, one dead-letter API). */
  readonly deadLetterRetentionSeconds: number;
  /** Caps concurrent long polls per subscription and per client, across containers. */
  readonly leases: PollLeases;
  readonly maxPollsPerSubscription: number;
  readonly maxPollsPerClient: number;
  /** The received events as they go out (receive-claim-check.ts); fewer when the rest cannot fit. Throws when the claim check is unavailable. */
  outgoingEvents(
    subscription: Subscription,
    events: readonly string[],
    maxAnswerBytes: number,
  ): Promise<readonly string[]>;
  /**
   * The owners' entitlements as configured now (EDU-7): a receive re-checks them, and the
   * subscription's current filters, before it hands an event out (issue 28, item 9). Absent: no check.
   */
  entitlements?(): Promise<Entitlements>;
  /** Ordered subscriptions' lanes (issue 33, docs/ORDERING.md "Pull"); absent: `ordering` is not read. */
  readonly ordering?: Pick<OrderedPullDependencies, 'lanes' | 'outbox' | 'settlingWindowMs'>;
}

/** A receive's request and the most its answer may hold. */
type BoundedReceive = ReceiveRequest & { readonly maxAnswerBytes: number };

/** SQS hands out at most ten messages per ReceiveMessage. */
const SQS_BATCH = 10;

/** Messages one receive took from the queue, and when it started taking them (the locks' start). */
interface Collected {
  readonly received: PulledMessage[];
  readonly startedAt: number;
}

export class PullService {
  private readonly ordered: OrderedPull | undefined;

  constructor(private readonly deps: PullDependencies) {
    this.ordered =
      deps.ordering && new OrderedPull({ ...deps.ordering, queues: deps.queues, clock: deps.clock, log: deps.log });
  }

  /** `maxAnswerBytes`: smaller for a receive whose answer is stored for replays (KEYED_RECEIVE_MAX_BYTES). */
  async receive(
    clientId: string,
    subscription: Subscription,
    body: Buffer,
    maxAnswerBytes = MAX_ANSWER_BYTES,
  ): Promise<HttpResponse> {
    const request = { ...parseReceiveRequest(body), maxAnswerBytes };
    // Short polls hold nothing for long, so only a long poll takes a slot.
    const waiting = await this.collect(subscription.id, request, 0);
    if (waiting.received.length > 0 || request.waitSeconds === 0)
      return this.answer(clientId, subscription, request, waiting);
    const slots = { leases: this.deps.leases, clock: this.deps.clock, log: this.deps.log };
    const limits = { perSubscription: this.deps.maxPollsPerSubscription, perClient: this.deps.maxPollsPerClient };
    return withPollSlots(slots, limits, { clientId, subscriptionId: subscription.id }, async () =>
      this.answer(clientId, subscription, request, await this.collect(subscription.id, request, request.waitSeconds)),
    );
  }

  /**
   * Receives up to `maxevents` messages under the request's lock. With a wait, the first call is a
   * long poll for one message; without, short polls side by side for the whole batch. Either way,
   * short polls then fill up until a round brings nothing new.
   */
  private async collect(id: string, request: ReceiveRequest, waitSeconds: number): Promise<Collected> {
    const { maxEvents, lockSeconds } = request;
    // Taken before SQS starts the locks, so a token never claims a lock SQS has already ended.
    const startedAt = this.deps.clock();
    const visibility = { visibilitySeconds: lockSeconds };
    const shortPolls = async (wanted: number): Promise<PulledMessage[]> => {
      const rounds = Array.from({ length: Math.ceil(wanted / SQS_BATCH) }, (_, index) =>
        Math.min(SQS_BATCH, wanted - index * SQS_BATCH),
      );
      return (
        await Promise.all(rounds.map((max) => this.deps.queues.receive(id, { max, waitSeconds: 0, ...visibility })))
      ).flat();
    };
    const received: PulledMessage[] =
      waitSeconds > 0
        ? await this.deps.queues.receive(id, { max: 1, waitSeconds, ...visibility })
        : await shortPolls(maxEvents);
    while (received.length > 0 && received.length < maxEvents) {
      const more = await shortPolls(maxEvents - received.length);
      if (more.length === 0) break;
      received.push(...more);
    }
    return { received, startedAt };
  }

  private async answer(
    clientId: string,
    subscription: Subscription,
    request: BoundedReceive,
    { received, startedAt }: Collected,
  ): Promise<HttpResponse> {
    const { maxEvents, lockSeconds, maxAnswerBytes } = request;
    const id = subscription.id;
    const lockedUntil = lockExpiry(startedAt, lockSeconds);
    // An ordered subscription's settle messages and copies of a head are dealt with, not handed out (ordered-pull.ts).
    const all = await this.dispositions(subscription, received);
    const { dispositions, places } = this.ordered
      ? await this.ordered.admit(subscription, all, lockedUntil)
      : { dispositions: all, places: new Map<string, LanePlace>() };
    await this.deadLetter(subscription, dispositions);
    await this.settleWithheld(subscription, dispositions);
    await this.ordered?.afterSettledUnsent(subscription, dispositions, places);
    const key = await this.deps.lockTokenKey();
    const deliveries = dispositions
      .filter((d): d is Extract<Disposition, { kind: 'deliver' }> => d.kind === 'deliver')
      .slice(0, maxEvents);
    const stored = deliveries.map(({ delivery }) => delivery.events[0]!);
    const events = await this.deps
      .outgoingEvents(subscription, stored, maxAnswerBytes)
      .catch(async (error: unknown) => {
        await this.giveBack(id, deliveries);
        this.deps.log.error('pull receive: claim check unavailable', { subscriptionId: id, error: String(error) });
        const detail = 'The data of an event could not be read; the events are back in the queue. Try again.';
        throw new KoerierError(problems.unavailable(detail), { headers: { 'retry-after': '1' }, cause: error });
      });
    const entries = deliveries.slice(0, events.length).map(({ message, delivery }, index) => {
      const lane = places.get(message.messageId);
      return {
        event: events[index]!,
        lock: withReplay(
          delivery,
          lockView(
            {
              subscriptionId: id,
              clientId,
              messageId: message.messageId,
              receiptHandle: message.receiptHandle,
              lockedUntil,
              deliveryCount: message.receiveCount,
              deliveryKey: delivery.deliveryId,
              ...(lane === undefined ? {} : { lane }),
            },
            key,
          ),
        ),
      };
    });
    const answer = assembleAnswer(entries, maxAnswerBytes);
    // What did not fit (or came beyond maxevents) goes back at once rather than waiting out its lock.
    const leftOver = dispositions.filter((d) => d.kind === 'deliver').slice(answer.included);
    await this.giveBack(id, leftOver);
    if (answer.included === 0 && deliveries.length > 0 && maxAnswerBytes < MAX_ANSWER_BYTES)
      throw tooLargeToReplay(maxAnswerBytes);
    this.deps.log.info('pull receive', {
      subscriptionId: id,
      received: received.length,
      delivered: answer.included,
      returned: leftOver.length,
    });
    return {
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      body: answer.body,
    };
  }

  private async giveBack(id: string, given: readonly { readonly message: PulledMessage }[]): Promise<void> {
    if (given.length === 0) return;
    const entries = given.map(({ message }, index) => ({
      entryId: String(index),
      receiptHandle: message.receiptHandle,
      seconds: 0,
    }));
    await this.deps.queues.changeVisibility(id, entries);
  }

  settle(clientId: string, subscription: Subscription, action: SettleAction, body: Buffer): Promise<HttpResponse> {
    return settleLocks(
      { ...this.deps, ...(this.ordered ? { ordered: this.ordered } : {}) },
      clientId,
      subscription,
      action,
      body,
    );
  }

  private async dispositions(subscription: Subscription, received: readonly PulledMessage[]): Promise<Disposition[]> {
    if (received.length === 0) return [];
    // Only a message received before can carry a reject's mark: a first delivery costs no lookup.
    const again = received.filter((message) => message.receiveCount > 1).map((message) => message.messageId);
    const [rejections, entitlements] = await Promise.all([
      again.length > 0 ? this.deps.rejections.find(subscription.id, again) : new Map<string, string>(),
      this.deps.entitlements?.(),
    ]);
    const maxDeliveryCount = subscription.pull?.maxDeliveryCount ?? Number.MAX_SAFE_INTEGER;
    return received.map((message) => {
      const disposition = dispositionOf(message, maxDeliveryCount, rejections);
      if (disposition.kind !== 'deliver' || entitlements === undefined) return disposition;
      // Issue 29, item 3: routed while it matched, handed out only if it still does (`mayReceive`); else settled unsent.
      for (const event of disposition.events) {
        const verdict = mayReceive(subscription, event, entitlements);
        if (verdict !== 'receives')
          return { kind: 'withheld', message, delivery: disposition.delivery, reason: verdict };
      }
      return disposition;
    });
  }

  /**
   * What the subscription may no longer receive leaves the queue unsent (docs/SUBSCRIPTIONS.md): not
   * a dead letter, since nothing failed and its owner may no longer be entitled to read it.
   */
  private async settleWithheld(subscription: Subscription, dispositions: readonly Disposition[]): Promise<void> {
    const withheld = dispositions.filter((d): d is Extract<Disposition, { kind: 'withheld' }> => d.kind === 'withheld');
    if (withheld.length === 0) return;
    await this.deps.queues.delete(
      subscription.id,
      withheld.map(({ message }, index) => ({ entryId: String(index), receiptHandle: message.receiptHandle })),
    );
    for (const { delivery, reason } of withheld)
      this.deps.log.info('delivery withheld: settled unsent', {
        subscriptionId: subscription.id,
        deliveryId: delivery.deliveryId,
        reason,
      });
  }

  /** Dead letters first, then out of the queue: a failure in between delivers again, never loses. */
  private async deadLetter(subscription: Subscription, dispositions: readonly Disposition[]): Promise<void> {
    const dead = dispositions.filter(
      (d): d is Extract<Disposition, { kind: 'dead-letter' }> => d.kind === 'dead-letter',
    );
    if (dead.length === 0) return;
    const now = this.deps.clock();
    const expiresAt = Math.ceil((now + this.deps.deadLetterRetentionSeconds * 1000) / 1000);
    await Promise.all(
      dead.map(({ message, delivery, reason, detail }) =>
        this.deps.deadLetters.putDeadLetter(
          {
            subscriptionId: subscription.id,
            deliveryId: delivery.deliveryId,
            events: delivery.events,
            createdAt: delivery.createdAt,
            deadLetteredAt: new Date(now).toISOString(),
            reason,
            detail,
            attempts: message.receiveCount - 1,
            lastAttempts: [],
            ...lineageOf(delivery),
          },
          expiresAt,
        ),
      ),
    );
    await this.deps.queues.delete(
      subscription.id,
      dead.map(({ message }, index) => ({ entryId: String(index), receiptHandle: message.receiptHandle })),
    );
    for (const { reason } of dead) this.deps.metrics.deadLettered(subscription.id, reason);
    const rejected = dead.filter((d) => d.reason === 'rejected').map((d) => d.message.messageId);
    if (rejected.length > 0) await this.deps.rejections.clear(subscription.id, rejected);
    this.deps.log.info('pull events dead-lettered', {
      subscriptionId: subscription.id,
      count: dead.length,
      reasons: dead.map((d) => d.reason),
    });
  }
}

/** A replayed event's lock names its replay, beside the event (docs/REPLAY.md). */
function withReplay(delivery: { readonly replay?: LockView['replay'] }, lock: LockView): LockView {
  return delivery.replay ? { ...lock, replay: { id: delivery.replay.id, sequence: delivery.replay.sequence } } : lock;
}

function lockView(contents: LockTokenContents, key: Buffer): LockView {
  return {
    locktoken: sealLockToken(contents, key),
    lockeduntil: new Date(contents.lockedUntil).toISOString(),
    deliverycount: contents.deliveryCount,
    deliverykey: contents.deliveryKey,
  };
}
