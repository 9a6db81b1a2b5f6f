/**
 * One subscription's share of a delivery batch (functions/core/delivery/dispatcher.ts): it runs the
 * stages — gates, the hand-out check, split, admission, attempts, settling — and applies the steps
 * they decide: decisions for the queue, progress, dead letters, status changes and operational
 * events. What the batch needs back (attempt records, dead letters and suspensions counted) it
 * reads from the instance once the run is over.
 */
import { systemClock, type Clock } from '../ports/clock.js';
import { errorMessage } from '../errors/describe-error.js';
import { tell } from '../operations/operational-events.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { admit } from './admission.js';
import { observeAttempt } from './attempt-observation.js';
import { OrderedDispatch } from './ordered-dispatch.js';
import { attemptAll, type Sending } from './attempt.js';
import type { AttemptRecord } from './delivery-records.js';
import type { DeliveryDecision, DispatcherDependencies, QueuedDelivery } from './dispatch-ports.js';
import { withheldFrom } from './hand-out-check.js';
import { DeadLetterTelling, retiredNotice, suspendedNotice } from './operational-notices.js';
import { gateSubscription, prepare, progressOf } from './preparation.js';
import { deadLetterStep, LAST_RECEIVE, retryStep, settleAttempt, targetFailingReason } from './settle-attempt.js';
import type { DeadLetterStep, NextStep, Settlement } from './settle-attempt.js';
import { splitIntoSingleEvents } from './split.js';
import { dueForSuspension, type TargetState } from './target-health.js';
import { targetHealthChange, type TargetHealthChange } from './target-health-change.js';

/** One subscription's share of a batch: runs the stages and applies their steps. */
export class SubscriptionDispatch {
  private readonly now: Clock;
  private readonly random: () => number;
  private readonly decisions: DeliveryDecision[] = [];
  /** The attempts made, for the history: the batch writes them all at once. */
  readonly records: AttemptRecord[] = [];
  deadLettered = 0;
  /** Suspended here because the target kept failing: the operator's "suspended in bulk" alarm counts these. */
  suspended = 0;
  private retired = false;
  /** Known once the gate let it through: operational events name its owner. */
  private subscription?: Subscription;
  private readonly telling: DeadLetterTelling;
  /** An ordered subscription's holds on its keys (issue 33): every step applied goes through it. */
  private ordered?: OrderedDispatch;

  constructor(
    private readonly subscriptionId: string,
    private readonly deps: DispatcherDependencies,
    private readonly initialTarget: TargetState,
    private readonly deadline = Number.POSITIVE_INFINITY,
  ) {
    this.now = deps.clock ?? systemClock;
    this.random = deps.random ?? Math.random;
    this.telling = new DeadLetterTelling(subscriptionId, deps, this.now);
  }

  async run(deliveries: readonly QueuedDelivery[]): Promise<DeliveryDecision[]> {
    const { deps, subscriptionId } = this;
    const gate = await gateSubscription(subscriptionId, deps, this.now);
    if (gate.kind !== 'active') {
      for (const delivery of deliveries) {
        if (gate.kind === 'deleted')
          deps.log.info('subscription no longer exists; delivery dropped', {
            subscriptionId,
            deliveryId: delivery.message.deliveryId,
          });
        await this.apply(
          delivery,
          gate.kind === 'deleted'
            ? DONE
            : deadLetterStep(delivery, gate.reason, gate.detail, undefined, undefined, deps.policy, this.now()),
        );
      }
      return this.decisions;
    }
    const { subscription } = gate;
    this.subscription = subscription;
    const entitlements = await deps.entitlements?.();
    if (subscription.ordering !== undefined && deps.lanes !== undefined) {
      const { lanes, outbox, log, policy } = deps;
      const maxReceiveCount = policy.maxReceiveCount;
      const settlingWindowMs = deps.orderingSettlingMs;
      this.ordered = new OrderedDispatch(subscription, {
        lanes,
        outbox,
        log,
        now: this.now,
        maxReceiveCount,
        ...(settlingWindowMs === undefined ? {} : { settlingWindowMs }),
        ...(entitlements === undefined ? {} : { entitlements }),
      });
      deliveries = await this.ordered.admit(deliveries, (delivery, next) => this.apply(delivery, next));
    }

    const ready: Sending[] = [];
    const toSplit: QueuedDelivery[] = [];
    await Promise.all(
      deliveries.map(async (delivery) => {
        try {
          const handOut = entitlements === undefined ? 'send' : withheldFrom(delivery, subscription, entitlements);
          if (handOut === 'split') return void toSplit.push(delivery);
          if (handOut !== 'send') {
            // Issue 29, item 3: matched when routed, but not now. Not handed out: settled unsent and
            // logged, not a dead letter (nothing failed, and the owner may no longer read the event).
            deps.log.info('delivery withheld: settled unsent', {
              subscriptionId,
              deliveryId: delivery.message.deliveryId,
              reason: handOut,
            });
            return await this.apply(delivery, DONE);
          }
          const prepared = await prepare(delivery, subscription, {
            ledger: deps.ledger,
            policy: deps.policy,
            origin: deps.origin,
            now: this.now,
          });
          if (prepared.kind === 'split') return void toSplit.push(delivery);
          if (prepared.kind === 'ready') return void ready.push({ delivery, ...prepared.sending });
          if (prepared.unsendableHeader !== undefined) {
            deps.log.warn('delivery cannot be sent as an HTTP request; dead-lettered', {
              subscriptionId,
              deliveryId: delivery.message.deliveryId,
              header: prepared.unsendableHeader,
            });
          }
          await this.apply(delivery, prepared.next);
        } catch (error) {
          // This delivery's own state could not be read or written: it alone comes back later;
          // the others of the group go on (issue 8, item 1).
          deps.log.error('delivery not prepared; retrying it', {
            subscriptionId,
            deliveryId: delivery.message.deliveryId,
            error: errorMessage(error),
          });
          this.decisions.push(...(await this.retryLater([delivery])));
        }
      }),
    );
    if (toSplit.length > 0) {
      await deps.outbox.enqueue(subscription, splitIntoSingleEvents(toSplit.map(({ message }) => message)));
      for (const delivery of toSplit) await this.apply(delivery, DONE);
    }
    if (ready.length === 0) return this.decisions;

    // Fetched before the rate slots are planned, so each request leaves at its slot (WH-6) and not
    // a token fetch later, bunched up with the next. A failure is the attempts' to report.
    const token =
      subscription.credential?.kind === 'oauth2-client-credentials' ? deps.accessToken(subscription) : undefined;
    await token?.catch(() => undefined);
    const admission = await admit(subscriptionId, subscription, ready.length, this.initialTarget, {
      targets: deps.targets,
      policy: deps.policy,
      now: this.now,
      random: this.random,
    });
    const sending = ready.slice(0, admission.waits.length);
    for (const [index, { delivery, progress }] of ready.slice(sending.length).entries()) {
      await this.apply(
        delivery,
        retryStep(delivery, admission.deferMs[index]!, 'up', progress, deps.policy, this.now()),
      );
    }
    if (sending.length === 0) return this.decisions;

    const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const reports = await attemptAll(subscription, sending, admission.waits, {
      deps,
      now: this.now,
      sleep,
      deadline: this.deadline,
      token,
    });
    const settlements: Settlement[] = [];
    for (const [index, report] of reports.entries()) {
      const { delivery, progress } = sending[index]!;
      if ('outOfTime' in report)
        deps.log.info('no time left in this batch to attempt the delivery; back shortly', {
          subscriptionId,
          deliveryId: delivery.message.deliveryId,
        });
      const settlement = settleAttempt(
        { delivery, subscription, target: admission.target, report },
        progress,
        deps.policy,
        this.now(),
        this.random,
      );
      settlements.push(settlement);
      await this.applySettlement(delivery, settlement);
    }
    await this.applyHealth(
      targetHealthChange(
        settlements.map((settlement) => settlement.health),
        admission,
        subscription.allowedRatePerMinute,
        this.now(),
      ),
    );
    return this.decisions;
  }

  private async applySettlement(
    delivery: QueuedDelivery,
    { record, retireSubscription, progress, next }: Settlement,
  ): Promise<void> {
    if (record) {
      this.records.push(record);
      observeAttempt(this.deps, delivery, record);
    }
    const retiring = this.retired ? undefined : retireSubscription;
    if (retiring !== undefined) this.retired = true;
    if (progress) await this.deps.ledger.putProgress(this.subscriptionId, progress.progress, progress.expiresAt);
    await this.apply(delivery, next);
    // The dead letter is written before the status says retired, so whoever sees `retired` finds the
    // event that made it so among the dead letters, and a crash in between leaves a retry, not a gap.
    if (retiring !== undefined) await this.retire(retiring);
  }

  private async retire(reason: string): Promise<void> {
    await this.deps.subscriptions.updateStatus(this.subscriptionId, 'retired', reason);
    this.deps.log.warn('subscription retired: the target answered 410 Gone', { subscriptionId: this.subscriptionId });
    if (this.subscription)
      await tell(this.deps.operations, [retiredNotice(this.subscription, reason, this.now())], this.deps.log);
  }

  private async applyHealth(change: TargetHealthChange): Promise<void> {
    const { deps, subscriptionId } = this;
    if (change.throttle)
      await deps.targets.recordThrottle(subscriptionId, change.throttle.pauseUntil, change.throttle.throttle);
    if (change.record.kind === 'success') await deps.targets.recordTargetSuccess(subscriptionId);
    if (change.record.kind === 'release-probe') await deps.targets.releaseProbe(subscriptionId, change.record.until);
    if (change.record.kind !== 'failures') return;
    const now = this.now();
    const after = await deps.targets.recordTargetFailures(
      subscriptionId,
      change.record.count,
      now,
      change.record.probe,
    );
    if (after.failingSince !== undefined && dueForSuspension(after, deps.policy.suspendAfterSeconds, now)) {
      const reason = targetFailingReason(subscriptionId, after.failingSince, change.record.lastFailure);
      await deps.subscriptions.updateStatus(subscriptionId, 'suspended', reason, 'target-failing');
      this.suspended++;
      deps.log.warn('subscription suspended: its target keeps failing', {
        subscriptionId,
        failingSince: new Date(after.failingSince).toISOString(),
      });
      if (this.subscription)
        await tell(
          deps.operations,
          [suspendedNotice(this.subscription, reason, 'target-failing', after.failingSince, now)],
          deps.log,
        );
    }
  }

  /** Takes one step for one queue message: a dead letter is written before its message is let go. */
  private async apply(delivery: QueuedDelivery, step: NextStep): Promise<void> {
    const next = this.ordered ? await this.ordered.settle(delivery, step) : step;
    if (next.kind === 'retry')
      return void this.decisions.push({
        messageId: delivery.messageId,
        action: 'retry',
        delaySeconds: next.delaySeconds,
      });
    // An ordered run's dead letter is one per event (ordered-run.ts).
    if (next.kind === 'dead-letter')
      for (const one of this.ordered?.deadLettersOf(delivery, next) ?? [next]) await this.putDeadLetter(one);
    this.decisions.push({ messageId: delivery.messageId, action: 'done' });
  }

  private async putDeadLetter({ deadLetter, expiresAt }: DeadLetterStep): Promise<void> {
    await this.telling.put(deadLetter, this.subscription, () =>
      this.deps.deadLetters.putDeadLetter(deadLetter, expiresAt),
    );
    this.deadLettered++;
    this.deps.metrics?.deadLettered(this.subscriptionId, deadLetter.reason);
    this.deps.log.warn('delivery dead-lettered', {
      subscriptionId: this.subscriptionId,
      deliveryId: deadLetter.deliveryId,
      reason: deadLetter.reason,
    });
  }

  /**
   * After an unexpected failure (store or queue trouble): later, and later still the more often it
   * happened; on the last receive a dead letter instead, if the store takes it now, else the
   * queue's dead-letter queue (and its alarm) is all that is left.
   */
  async retryLater(deliveries: readonly QueuedDelivery[]): Promise<DeliveryDecision[]> {
    return Promise.all(
      deliveries.map(async (delivery): Promise<DeliveryDecision> => {
        if (delivery.receiveCount >= this.deps.policy.maxReceiveCount) {
          try {
            const progress = await progressOf(delivery, this.deps.ledger);
            await this.putDeadLetter(
              deadLetterStep(delivery, 'exhausted', LAST_RECEIVE, progress, undefined, this.deps.policy, this.now()),
            );
            return { messageId: delivery.messageId, action: 'done' };
          } catch (error) {
            const fields = {
              subscriptionId: this.subscriptionId,
              deliveryId: delivery.message.deliveryId,
              error: errorMessage(error),
            };
            this.deps.log.error('last receive, and no dead letter written; left for the dead-letter queue', fields);
          }
        }
        return {
          messageId: delivery.messageId,
          action: 'retry',
          delaySeconds: Math.min(30 * delivery.receiveCount, 900),
        };
      }),
    );
  }
}

const DONE: NextStep = { kind: 'done' };
