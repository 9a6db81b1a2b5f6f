/**
 * The delivery function's work on one batch of delivery messages (EDU-9, EDU-17, EDU-18): for
 * each subscription in the batch, check it may still receive, respect its target's breaker and
 * rate (WH-6, EDU-10, EDU-12), send (WH-1, WH-3), judge the answer (WH-2), and decide per message:
 * `done` (delivered, dead-lettered, or split up) or `retry` after a delay, which the handler turns
 * into the message's visibility timeout, so nothing ever waits in memory for a retry.
 *
 * Nothing is dropped silently: a delivery that will not be tried again becomes a dead letter
 * (kept with its events, attempts and reason) before its message is let go. The one exception is
 * a subscription that no longer exists: its owner deleted it, so there is nowhere to keep it for.
 */
import { deliveryIdOf } from '../routing/routed-events.js';
import { credentialShortfall, type SinkCredentialPolicy } from '../credentials/sink-credential.js';
import type { Subscription, SubscriptionStatus, SuspensionCause } from '../subscriptions/subscription.js';
import { judgeAttempt, SUBSCRIBER_FAILURE, type AttemptResult, type Verdict } from './attempt-outcome.js';
import { decodeDeliveryMessage, type DeliveryMessage } from './delivery-message.js';
import { KEPT_ATTEMPTS, type AttemptRecord, type DeadLetter, type DeadLetterReason, type DeliveryProgress, type DeliveryStateStore } from './delivery-records.js';
import { keyDeadline, nextAttemptAt, nominalDelayMs, retryDeadline, type RetrySchedule } from './retry-schedule.js';
import { breakerOf, dueForSuspension, effectiveRatePerMinute, HEALTHY, planSends, throttleAfter429, type BreakerSettings, type TargetState } from './target-health.js';
import { deliveryFormat, unsendableHeader, webhookRequest, type DeliveryFormat, type WebhookRequest } from './webhook-request.js';

export interface DeliveryPolicy {
  readonly retry: RetrySchedule;
  readonly breaker: BreakerSettings;
  readonly suspendAfterSeconds: number;
  /** The receiver's idempotency-key lifetime (EDU-IDEM-7): no attempt after it (EDU-IDEM-12). */
  readonly keyTtlSeconds: number;
  readonly historySeconds: number;
  readonly deadLetterRetentionSeconds: number;
  /** How long admitted deliveries may wait in memory for their rate slot. */
  readonly rateHorizonMs: number;
  /** How long a half-open probe holds the target for itself: its connect plus response time. */
  readonly probeLeaseMs: number;
  /** The queue's redrive threshold: on this receive, a retry becomes a dead letter instead. */
  readonly maxReceiveCount: number;
  /** The longest one request to a target can take: its connect plus response timeout. */
  readonly sendTimeoutMs: number;
  /** The longest fetching an OAuth2 access token can take. */
  readonly tokenTimeoutMs: number;
  /** Which sink credentials the deployment accepts (WH-3, EDU-4): a subscription without one is suspended. */
  readonly sinkCredentials: SinkCredentialPolicy;
}

/** The batch's time budget. */
export interface DispatchOptions {
  /**
   * Epoch ms by which every attempt must be over, so the decisions can still be applied before
   * the function times out (a timeout applies none of them). An attempt that might not end by
   * then is not started.
   */
  readonly deadline?: number;
}

/** A message as the queue handed it over. */
export interface DeliveryTask {
  readonly messageId: string;
  readonly body: string;
  /** SQS ApproximateReceiveCount: 1 on the first receive. */
  readonly receiveCount: number;
}

export type DeliveryDecision =
  | { readonly messageId: string; readonly action: 'done' }
  /** Leave the message in the queue and show it again after `delaySeconds`. */
  | { readonly messageId: string; readonly action: 'retry'; readonly delaySeconds: number };

export class CredentialUnavailableError extends Error {
  override name = 'CredentialUnavailableError';
}

export interface DispatcherDependencies {
  readonly store: DeliveryStateStore;
  readonly subscriptions: {
    /** May answer from a short-lived cache unless `fresh`. */
    get(id: string, options?: { fresh?: boolean }): Promise<Subscription | undefined>;
    updateStatus(id: string, status: SubscriptionStatus, reason: string, suspendedFor?: SuspensionCause): Promise<void>;
  };
  /**
   * The bearer token for the subscription's sink (WH-3); only called for a subscription with a credential.
   * `refresh` asks for a new one (after a 401). Throws CredentialUnavailableError.
   */
  accessToken(subscription: Subscription, options?: { refresh?: boolean }): Promise<string | undefined>;
  send(request: WebhookRequest): Promise<AttemptResult>;
  /** Puts new delivery messages on the deliveries queue (a batch split into single events). */
  enqueue(messages: readonly DeliveryMessage[]): Promise<void>;
  readonly policy: DeliveryPolicy;
  /** `WebHook-Request-Origin`. */
  readonly origin: string;
  readonly log: (level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown>) => void;
  readonly clock?: () => number;
  readonly random?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const LAST_RECEIVE = 'the delivery could not be attempted again before the queue would have set it aside';

/** How soon a delivery that did not fit in the batch's time budget comes back. */
export const OUT_OF_TIME_RETRY_MS = 3_000;

/** SQS's longest visibility timeout, less a margin: a longer wait is served in several hops. */
export const MAX_DELAY_SECONDS = 43_200 - 60;

interface Task {
  readonly messageId: string;
  readonly receiveCount: number;
  readonly message: DeliveryMessage;
}

interface Admission {
  /** The target state the admission was decided on. */
  readonly target: TargetState;
  /** The one admitted delivery is the half-open breaker's probe. */
  readonly probe: boolean;
  /** In-memory wait before each admitted delivery (its rate slot). */
  readonly waits: readonly number[];
  /** Visibility delay of each delivery not admitted. */
  readonly deferMs: readonly number[];
}

/** Not attempted: it might not have ended before the batch's deadline. */
interface OutOfTime {
  readonly task: Task;
  readonly outOfTime: true;
}

interface Attempted {
  readonly task: Task;
  /** Epoch ms when the request went out. */
  readonly at: number;
  readonly latencyMs: number;
  readonly status?: number;
  readonly verdict: Verdict;
  /** A 401 to a token now refreshed: try again with it, in a rate slot of its own. */
  readonly freshToken?: true;
}

/** What a batch came to: a decision per message, and its figures for metrics. */
export interface BatchOutcome {
  readonly decisions: readonly DeliveryDecision[];
  /** Requests sent to targets. */
  readonly attempts: number;
  /** Of those, the ones not answered with a 2xx. */
  readonly failedAttempts: number;
  /** Deliveries that became dead letters (with or without an attempt in this batch). */
  readonly deadLettered: number;
}

export async function dispatchBatch(tasks: readonly DeliveryTask[], deps: DispatcherDependencies, options: DispatchOptions = {}): Promise<BatchOutcome> {
  const decisions: DeliveryDecision[] = [];
  const groups = new Map<string, Task[]>();
  for (const task of tasks) {
    let message: DeliveryMessage;
    try {
      message = decodeDeliveryMessage(task.body);
    } catch {
      // Cannot ever be delivered, nor kept under a subscription: straight on to the queue's
      // redrive policy, whose dead-letter queue raises the alarm.
      deps.log('error', 'not a delivery message; left for the dead-letter queue', { messageId: task.messageId });
      decisions.push({ messageId: task.messageId, action: 'retry', delaySeconds: 0 });
      continue;
    }
    const group = groups.get(message.subscriptionId) ?? [];
    group.push({ messageId: task.messageId, receiveCount: task.receiveCount, message });
    groups.set(message.subscriptionId, group);
  }
  const outcome = (all: DeliveryDecision[], records: readonly AttemptRecord[] = [], deadLettered = 0): BatchOutcome => ({
    decisions: all,
    attempts: records.length,
    failedAttempts: records.filter((record) => record.outcome !== 'delivered').length,
    deadLettered,
  });
  if (groups.size === 0) return outcome(decisions);

  // One read for the targets of the whole batch, one write for its attempt history: the common
  // case costs two requests per batch, whatever the number of subscriptions in it.
  let targets: ReadonlyMap<string, TargetState>;
  try {
    targets = await deps.store.getTargets([...groups.keys()]);
  } catch (error) {
    deps.log('error', 'target state unreadable; retrying the batch', { error: error instanceof Error ? error.message : String(error) });
    const dispatches = [...groups].map(([subscriptionId, group]) => ({ dispatch: new SubscriptionDispatch(subscriptionId, deps, HEALTHY), group }));
    const later = await Promise.all(dispatches.map(({ dispatch, group }) => dispatch.retryLater(group)));
    return outcome([...decisions, ...later.flat()], [], dispatches.reduce((sum, { dispatch }) => sum + dispatch.deadLettered, 0));
  }
  const records: AttemptRecord[] = [];
  let deadLettered = 0;
  const perGroup = await Promise.all(
    [...groups].map(async ([subscriptionId, group]) => {
      const dispatch = new SubscriptionDispatch(subscriptionId, deps, targets.get(subscriptionId) ?? HEALTHY, options.deadline);
      try {
        return await dispatch.run(group);
      } catch (error) {
        // Store or queue trouble: try the whole group again later; attempts already made repeat
        // with the same Idempotency-Key, which is what the receiver deduplicates on.
        deps.log('error', 'delivery group failed; retrying', { subscriptionId, error: error instanceof Error ? error.message : String(error) });
        return dispatch.retryLater(group);
      } finally {
        records.push(...dispatch.records);
        deadLettered += dispatch.deadLettered;
      }
    }),
  );
  if (records.length > 0) {
    try {
      const now = (deps.clock ?? Date.now)();
      await deps.store.recordAttempts(records, Math.ceil((now + deps.policy.historySeconds * 1000) / 1000));
    } catch (error) {
      // History is for people; the deliveries themselves are settled. Never redo them for it.
      deps.log('warn', 'attempt history not written', { attempts: records.length, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return outcome([...decisions, ...perGroup.flat()], records, deadLettered);
}

/** One subscription's share of a batch. */
class SubscriptionDispatch {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly decisions: DeliveryDecision[] = [];
  /** The attempts made, for the history: the batch writes them all at once. */
  readonly records: AttemptRecord[] = [];
  /** The OAuth2 access token for this batch, once asked for. */
  private token: Promise<string | undefined> | undefined;
  deadLettered = 0;

  constructor(
    private readonly subscriptionId: string,
    private readonly deps: DispatcherDependencies,
    private readonly initialTarget: TargetState,
    private readonly deadline = Number.POSITIVE_INFINITY,
  ) {
    this.now = deps.clock ?? Date.now;
    this.random = deps.random ?? Math.random;
  }

  async run(tasks: readonly Task[]): Promise<DeliveryDecision[]> {
    let subscription = await this.deps.subscriptions.get(this.subscriptionId);
    // Holding deliveries back (or dropping them) must not rest on a cached status: a resume a
    // moment ago would otherwise park the very deliveries it sent again.
    if (subscription?.status !== 'active') subscription = await this.deps.subscriptions.get(this.subscriptionId, { fresh: true });
    if (!subscription) {
      for (const task of tasks) {
        this.deps.log('info', 'subscription no longer exists; delivery dropped', { subscriptionId: this.subscriptionId, deliveryId: task.message.deliveryId });
        this.done(task);
      }
      return this.decisions;
    }
    const shortfall = subscription.status === 'active' ? credentialShortfall(subscription.credential, this.deps.policy.sinkCredentials) : undefined;
    if (shortfall !== undefined) {
      // A record from before credentials were required (or a bearer token where only OAuth2 is
      // allowed): nothing goes out without a token (WH-3). Parked like any suspension; the PATCH
      // that sets a credential reactivates it and sends them again.
      await this.deps.subscriptions.updateStatus(this.subscriptionId, 'suspended', `Suspended: ${shortfall}.`, 'credential-required');
      this.deps.log('warn', 'subscription suspended: no acceptable sink credential', { subscriptionId: this.subscriptionId, credential: subscription.credential?.kind ?? 'none' });
      subscription = { ...subscription, status: 'suspended', statusReason: shortfall };
    }
    if (subscription.status !== 'active') {
      const [reason, detail] = notActive(subscription.status, subscription.statusReason);
      for (const task of tasks) await this.deadLetter(task, reason, detail, undefined);
      return this.decisions;
    }
    const active = subscription;

    const ready: { task: Task; format: DeliveryFormat; progress?: DeliveryProgress }[] = [];
    const toSplit: Task[] = [];
    await Promise.all(
      tasks.map(async (task) => {
        try {
          if (this.now() >= keyDeadline(task.message.createdAt, this.deps.policy.keyTtlSeconds)) {
            // EDU-IDEM-12: the receiver may have forgotten the key; never send under it again.
            const progress = await this.progressOf(task);
            await this.deadLetter(task, 'exhausted', "the delivery's Idempotency-Key lifetime has passed", progress);
            return;
          }
          const format = deliveryFormat(active, task.message.events.length);
          if (format === 'split') return void toSplit.push(task);
          const progress = await this.progressOf(task);
          const unsendable = this.unsendable(task, active, format);
          if (unsendable !== undefined) {
            // Nothing was sent, so the target is not at fault: no attempt, no rate slot, no breaker.
            this.deps.log('warn', 'delivery cannot be sent as an HTTP request; dead-lettered', { subscriptionId: this.subscriptionId, deliveryId: task.message.deliveryId, header: unsendable });
            await this.deadLetter(task, 'not-sendable', SUBSCRIBER_FAILURE['not-sendable'].detail, progress);
            return;
          }
          // Received before a wait longer than one visibility timeout is over: wait on.
          if (progress?.nextAttemptAt !== undefined && progress.nextAttemptAt - this.now() > 1000) return this.retryIn(task, progress.nextAttemptAt - this.now(), Math.ceil, progress);
          ready.push({ task, format, ...(progress ? { progress } : {}) });
        } catch (error) {
          // This delivery's own state could not be read or written: it alone comes back later;
          // the others of the group go on (issue 8, item 1).
          this.deps.log('error', 'delivery not prepared; retrying it', { subscriptionId: this.subscriptionId, deliveryId: task.message.deliveryId, error: error instanceof Error ? error.message : String(error) });
          this.decisions.push(...(await this.retryLater([task])));
        }
      }),
    );
    if (toSplit.length > 0) await this.split(toSplit);
    if (ready.length === 0) return this.decisions;

    if (active.credential?.kind === 'oauth2-client-credentials') {
      // Fetched before the rate slots are planned, so each request leaves at its slot (WH-6) and
      // not a token fetch later, bunched up with the next. A failure is the attempts' to report.
      this.token = this.deps.accessToken(active);
      await this.token.catch(() => undefined);
    }
    const admission = await this.admit(active, ready.length);
    const sending = ready.slice(0, admission.waits.length);
    for (const [index, { task, progress }] of ready.slice(sending.length).entries()) await this.retryIn(task, admission.deferMs[index]!, Math.ceil, progress);
    if (sending.length === 0) return this.decisions;

    const attempts = await this.attemptAll(active, sending, admission.waits);
    await this.conclude(active, admission, attempts, new Map(sending.map((r) => [r.task.messageId, r.progress])));
    return this.decisions;
  }

  /** The name of a header this delivery's request could not carry (see `unsendableHeader`). */
  private unsendable(task: Task, subscription: Subscription, format: DeliveryFormat): string | undefined {
    try {
      // The real token comes later; a stand-in of the same alphabet (RFC 6750 b64token) checks the rest.
      return unsendableHeader(webhookRequest({ message: task.message, sink: subscription.sink, format, origin: this.deps.origin, accessToken: 'token-checked-later' }));
    } catch {
      return 'body';
    }
  }

  /**
   * How many may go now — one in-memory wait each, for its rate slot — and how long the others
   * are put back: until the breaker's cool-down ends, the probe is over, or their rate slot.
   */
  private async admit(subscription: Subscription, count: number): Promise<Admission> {
    const { policy } = this.deps;
    let target = this.initialTarget;
    let holdsProbe = false;
    for (let round = 0; round < 3; round++) {
      const now = this.now();
      const breaker = breakerOf(target, policy.breaker, now);
      if (breaker.state === 'open') {
        // Spread the comeback over a tenth of the cool-down (at most half a minute).
        const spread = Math.min(30_000, (breaker.until - now) / 10);
        return { target, probe: false, waits: [], deferMs: Array.from({ length: count }, () => breaker.until - now + this.random() * spread) };
      }
      let allowed = count;
      if (breaker.state === 'half-open') {
        holdsProbe ||= await this.deps.store.takeProbe(this.subscriptionId, now, now + policy.probeLeaseMs);
        allowed = holdsProbe ? 1 : 0;
      }
      const rate = effectiveRatePerMinute(subscription.allowedRatePerMinute, target, now);
      const plan = planSends({ count: allowed, now, ratePerMinute: rate, nextSendAt: target.nextSendAt, horizonMs: policy.rateHorizonMs });
      const probeWait = () => policy.probeLeaseMs + this.random() * 5000;
      const deferMs = [...plan.deferred, ...Array.from({ length: count - allowed }, probeWait)];
      if (plan.nextSendAt === undefined || (await this.deps.store.reserveSendSlots(this.subscriptionId, target.nextSendAt, plan.nextSendAt))) {
        return { target, probe: holdsProbe, waits: plan.admitted, deferMs };
      }
      // Another instance reserved meanwhile: plan again on what it wrote.
      target = await this.deps.store.getTarget(this.subscriptionId);
    }
    return { target, probe: false, waits: [], deferMs: Array.from({ length: count }, () => 1000 + this.random() * 2000) };
  }

  private async attemptAll(
    subscription: Subscription,
    sending: readonly { task: Task; format: DeliveryFormat; progress?: DeliveryProgress }[],
    waits: readonly number[],
  ): Promise<(Attempted | OutOfTime)[]> {
    const { policy } = this.deps;
    const sleep = this.deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    // One token fetch for the batch, and at most one refresh.
    let token: Promise<string | undefined> | undefined = this.token;
    let refreshed: Promise<string | undefined> | undefined;
    const accessToken = (refresh: boolean) => (refresh ? (refreshed ??= this.deps.accessToken(subscription, { refresh })) : (token ??= this.deps.accessToken(subscription)));
    // The worst case of one attempt: its rate wait, a token fetch, the request, and after a 401
    // the fetch of a fresh token.
    const oauth2 = subscription.credential?.kind === 'oauth2-client-credentials';
    const worstCaseMs = oauth2 ? 2 * policy.tokenTimeoutMs + policy.sendTimeoutMs : policy.sendTimeoutMs;
    const credentialFailure = (error: unknown) => (error instanceof CredentialUnavailableError ? error : new CredentialUnavailableError(String(error)));
    return Promise.all(
      sending.map(async ({ task, format, progress }, index) => {
        const wait = waits[index] ?? 0;
        if (this.now() + wait + worstCaseMs > this.deadline) return { task, outOfTime: true } satisfies OutOfTime;
        if (wait > 0) await sleep(wait);
        const at = this.now();
        const send = async (): Promise<AttemptResult | CredentialUnavailableError> => {
          let bearer: string | undefined;
          try {
            bearer = await accessToken(false);
          } catch (error) {
            return credentialFailure(error);
          }
          // WH-3: nothing goes out without a token (the subscription was checked for a credential already).
          if (!bearer) return new CredentialUnavailableError('the subscription has no sink credential');
          const request = webhookRequest({ message: task.message, sink: subscription.sink, format, origin: this.deps.origin, accessToken: bearer });
          return this.deps.send(request);
        };
        let result = await send();
        // A cached OAuth2 token the target no longer accepts: fetch a fresh one (the token cache
        // keeps it) and try again with it. Not at once: this request used the delivery's rate
        // slot (WH-6). A 401 to the try after a refresh is the target's answer.
        if (oauth2 && !(result instanceof Error) && result.status === 401 && progress?.lastAttempts.at(-1)?.status !== 401) {
          try {
            await accessToken(true);
            return { task, at, latencyMs: result.latencyMs, status: 401, verdict: judgeAttempt(result, this.now()), freshToken: true } satisfies Attempted;
          } catch (error) {
            result = credentialFailure(error);
          }
        }
        if (result instanceof Error) {
          return { task, at, latencyMs: this.now() - at, verdict: { kind: 'failed', code: 'credential', detail: result.message } } satisfies Attempted;
        }
        if ('failure' in result) {
          // The transport's own words, which may name an internal address, are for operators only.
          this.deps.log('warn', 'delivery attempt failed without an answer', { subscriptionId: this.subscriptionId, deliveryId: task.message.deliveryId, failure: result.failure, error: result.message });
        }
        return { task, at, latencyMs: result.latencyMs, ...(result.status === undefined ? {} : { status: result.status }), verdict: judgeAttempt(result, this.now()) } satisfies Attempted;
      }),
    );
  }

  private async conclude(subscription: Subscription, admission: Admission, attempts: readonly (Attempted | OutOfTime)[], progressOf: ReadonlyMap<string, DeliveryProgress | undefined>): Promise<void> {
    const { policy } = this.deps;
    let delivered = 0;
    let failed = 0;
    let lastFailure = '';
    let throttledUntil: number | undefined;
    let retired = false;

    for (const attempted of attempts) {
      const progress = progressOf.get(attempted.task.messageId);
      // Not an attempt, so not a failure: it comes back soon, in a batch with time to send it.
      if ('outOfTime' in attempted) {
        this.deps.log('info', 'no time left in this batch to attempt the delivery; back shortly', { subscriptionId: this.subscriptionId, deliveryId: attempted.task.message.deliveryId });
        await this.retryIn(attempted.task, OUT_OF_TIME_RETRY_MS, Math.ceil, progress);
        continue;
      }
      const { task, at, latencyMs, status, verdict, freshToken } = attempted;
      const now = this.now();
      const attempt = (progress?.failedAttempts ?? 0) + 1;
      const base = {
        subscriptionId: this.subscriptionId,
        deliveryId: task.message.deliveryId,
        attempt,
        at: new Date(at).toISOString(),
        latencyMs,
        ...(status === undefined ? {} : { status }),
      };
      if (freshToken) {
        // The try with the fresh token takes a rate slot of its own: the next one the rate
        // allows, and not in this second. Not the target's failure: its health is untouched.
        const rate = effectiveRatePerMinute(subscription.allowedRatePerMinute, admission.target, now);
        const wait = Math.max(1000, rate === undefined ? 0 : 60_000 / rate);
        const record: AttemptRecord = { ...base, outcome: 'retrying', error: { code: 'rejected', detail: 'the target answered 401; trying again with a fresh access token' }, nextAttemptAt: new Date(now + wait).toISOString() };
        this.records.push(record);
        await this.retryIn(task, wait, Math.ceil, await this.saveProgress(task, progress, record));
        continue;
      }
      switch (verdict.kind) {
        case 'delivered':
          delivered++;
          this.records.push({ ...base, outcome: 'delivered' });
          this.done(task);
          break;
        case 'gone': {
          const record: AttemptRecord = { ...base, outcome: 'retired', error: { code: 'gone', detail: 'the target answered 410 Gone' } };
          this.records.push(record);
          if (!retired) {
            retired = true;
            await this.deps.subscriptions.updateStatus(this.subscriptionId, 'retired', `The target answered 410 Gone at ${base.at}; Koerier no longer delivers to it.`);
            this.deps.log('warn', 'subscription retired: the target answered 410 Gone', { subscriptionId: this.subscriptionId });
          }
          await this.deadLetter(task, 'gone', 'the target answered 410 Gone: the subscription is retired', progress, record);
          break;
        }
        case 'rejected': {
          const record: AttemptRecord = { ...base, outcome: 'dead-lettered', error: { code: verdict.code, detail: verdict.detail } };
          this.records.push(record);
          await this.deadLetter(task, verdict.code, verdict.detail, progress, record);
          break;
        }
        case 'failed':
        case 'throttled': {
          const error = verdict.kind === 'failed' ? { code: verdict.code, detail: verdict.detail } : { code: 'throttled' as const, detail: 'the target answered 429 Too Many Requests' };
          if (verdict.kind === 'failed' && verdict.code !== 'credential') {
            failed++;
            lastFailure = verdict.detail;
          }
          const retryAfterMs = verdict.retryAfterMs;
          // Every 429 slows the subscription down (WH-2, EDU-10); without a Retry-After the pause
          // is the schedule's wait for this attempt.
          if (verdict.kind === 'throttled') throttledUntil = Math.max(throttledUntil ?? 0, now + (retryAfterMs ?? nominalDelayMs(attempt, policy.retry)));
          const deadline = retryDeadline(task.message.createdAt, policy.retry, policy.keyTtlSeconds, subscription.retryWindowSeconds);
          const next =
            task.receiveCount >= policy.maxReceiveCount
              ? undefined
              : nextAttemptAt({ attempt, now, deadline, schedule: policy.retry, random: this.random, ...(retryAfterMs === undefined ? {} : { notBefore: now + retryAfterMs }) });
          if (next === undefined) {
            const record: AttemptRecord = { ...base, outcome: 'dead-lettered', error };
            this.records.push(record);
            await this.deadLetter(task, 'exhausted', `retries are over (${attempt} attempts); last: ${error.detail}`, progress, record);
          } else {
            const record: AttemptRecord = { ...base, outcome: 'retrying', error, nextAttemptAt: new Date(next).toISOString() };
            this.records.push(record);
            await this.saveProgress(task, progress, record, next - now > MAX_DELAY_SECONDS * 1000 ? next : undefined);
            // A Retry-After is a minimum; a backoff is approximate anyway (it carries jitter).
            await this.retryIn(task, next - now, retryAfterMs === undefined ? Math.round : Math.ceil);
          }
          break;
        }
      }
    }

    await this.updateTargetHealth(subscription, admission, { delivered, failed, lastFailure, throttledUntil, retired });
  }

  /** Keeps a failed attempt with the delivery's progress; `nextAttemptAt` for a wait of several hops. */
  private async saveProgress(task: Task, progress: DeliveryProgress | undefined, record: AttemptRecord, nextAttemptAt?: number): Promise<DeliveryProgress> {
    const saved: DeliveryProgress = {
      deliveryId: task.message.deliveryId,
      failedAttempts: record.attempt,
      lastAttempts: [...(progress?.lastAttempts ?? []), record].slice(-KEPT_ATTEMPTS),
      ...(nextAttemptAt === undefined ? {} : { nextAttemptAt }),
    };
    await this.deps.store.putProgress(this.subscriptionId, saved, this.expiry(task.message.createdAt + this.deps.policy.keyTtlSeconds * 1000));
    return saved;
  }

  private async updateTargetHealth(
    subscription: Subscription,
    { target, probe }: Admission,
    outcome: { delivered: number; failed: number; lastFailure: string; throttledUntil: number | undefined; retired: boolean },
  ): Promise<void> {
    const { store, policy } = this.deps;
    const now = this.now();
    if (outcome.throttledUntil !== undefined) {
      await store.recordThrottle(this.subscriptionId, outcome.throttledUntil, throttleAfter429(subscription.allowedRatePerMinute, target, now));
    }
    if (outcome.delivered > 0) {
      if (target.consecutiveFailures > 0 || target.failingSince !== undefined) await store.recordTargetSuccess(this.subscriptionId);
      return;
    }
    if (outcome.failed === 0 || outcome.retired) return;
    const after = await store.recordTargetFailures(this.subscriptionId, outcome.failed, now, probe);
    if (dueForSuspension(after, policy.suspendAfterSeconds, now)) {
      const since = new Date(after.failingSince!).toISOString();
      await this.deps.subscriptions.updateStatus(
        this.subscriptionId,
        'suspended',
        `No delivery has succeeded since ${since}; the last attempt failed: ${outcome.lastFailure}. Fix the target, then resume the subscription (POST /subscriptions/${this.subscriptionId}/resume).`,
        'target-failing',
      );
      this.deps.log('warn', 'subscription suspended: its target keeps failing', { subscriptionId: this.subscriptionId, failingSince: since });
    }
  }

  /**
   * Each event of a multi-event message as a delivery of its own (JSON-3). A split done again (the
   * group retried, the function timed out) must not make new operations: each child's key derives
   * from the parent's key and its place in it (EDU-IDEM-11), and it keeps the parent's age, so its
   * attempts end when the parent's key lifetime does (EDU-IDEM-12).
   */
  private async split(tasks: readonly Task[]): Promise<void> {
    const messages = tasks.flatMap(({ message }) =>
      message.events.map(
        (event, index): DeliveryMessage => ({
          version: 1,
          deliveryId: deliveryIdOf([message.deliveryId], this.subscriptionId, [`split#${index}`, event]),
          subscriptionId: this.subscriptionId,
          events: [event],
          createdAt: message.createdAt,
          ...(message.redriveOf ? { redriveOf: message.redriveOf } : {}),
        }),
      ),
    );
    await this.deps.enqueue(messages);
    for (const task of tasks) this.done(task);
  }

  private async progressOf(task: Task): Promise<DeliveryProgress | undefined> {
    // A first receive has no earlier attempts: skip the read, the common case costs nothing.
    return task.receiveCount > 1 ? this.deps.store.getProgress(this.subscriptionId, task.message.deliveryId) : undefined;
  }

  private async deadLetter(task: Task, reason: DeadLetterReason, detail: string, progress: DeliveryProgress | undefined, last?: AttemptRecord): Promise<void> {
    await this.putDeadLetter(task, reason, detail, progress, last);
    this.done(task);
  }

  private async putDeadLetter(task: Task, reason: DeadLetterReason, detail: string, progress: DeliveryProgress | undefined, last?: AttemptRecord): Promise<void> {
    const { message } = task;
    const lastAttempts = [...(progress?.lastAttempts ?? []), ...(last ? [last] : [])].slice(-KEPT_ATTEMPTS);
    const deadLetter: DeadLetter = {
      subscriptionId: this.subscriptionId,
      deliveryId: message.deliveryId,
      events: message.events,
      createdAt: message.createdAt,
      deadLetteredAt: new Date(this.now()).toISOString(),
      reason,
      detail,
      attempts: (progress?.failedAttempts ?? 0) + (last ? 1 : 0),
      lastAttempts,
      ...(message.redriveOf ? { redriveOf: message.redriveOf } : {}),
    };
    await this.deps.store.putDeadLetter(deadLetter, this.expiry(this.now() + this.deps.policy.deadLetterRetentionSeconds * 1000));
    this.deadLettered++;
    this.deps.log('warn', 'delivery dead-lettered', { subscriptionId: this.subscriptionId, deliveryId: message.deliveryId, reason });
  }

  private done(task: Task): void {
    this.decisions.push({ messageId: task.messageId, action: 'done' });
  }

  /**
   * SQS delays are whole seconds: rounded up unless told otherwise, so a wait is never cut short.
   * Never past the key deadline: the message then comes back to be dead-lettered, not hours later.
   * On the message's last receive it is not put back: the queue would move it to its dead-letter
   * queue, where the subscriber never sees it; it becomes one of the app's dead letters (EDU-18).
   */
  private async retryIn(task: Task, ms: number, toSeconds: (seconds: number) => number = Math.ceil, progress?: DeliveryProgress): Promise<void> {
    if (task.receiveCount >= this.deps.policy.maxReceiveCount) {
      return this.deadLetter(task, 'exhausted', LAST_RECEIVE, progress ?? (await this.progressOf(task)));
    }
    const untilDeadline = keyDeadline(task.message.createdAt, this.deps.policy.keyTtlSeconds) - this.now();
    this.decisions.push({ messageId: task.messageId, action: 'retry', delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(1, toSeconds(Math.min(ms, untilDeadline) / 1000))) });
  }

  /**
   * After an unexpected failure (store or queue trouble): later, and later still the more often it
   * happened; on the last receive a dead letter instead, if the store takes it now, else the
   * queue's dead-letter queue (and its alarm) is all that is left.
   */
  async retryLater(tasks: readonly Task[]): Promise<DeliveryDecision[]> {
    return Promise.all(
      tasks.map(async (task): Promise<DeliveryDecision> => {
        if (task.receiveCount >= this.deps.policy.maxReceiveCount) {
          try {
            await this.putDeadLetter(task, 'exhausted', LAST_RECEIVE, await this.progressOf(task));
            return { messageId: task.messageId, action: 'done' };
          } catch (error) {
            this.deps.log('error', 'last receive, and no dead letter written; left for the dead-letter queue', { subscriptionId: this.subscriptionId, deliveryId: task.message.deliveryId, error: error instanceof Error ? error.message : String(error) });
          }
        }
        return { messageId: task.messageId, action: 'retry', delaySeconds: Math.min(30 * task.receiveCount, 900) };
      }),
    );
  }

  /** DynamoDB TTL is epoch seconds. */
  private expiry(epochMs: number): number {
    return Math.ceil(epochMs / 1000);
  }
}

function notActive(status: SubscriptionStatus, reason: string | undefined): [DeadLetterReason, string] {
  const why = reason ? `: ${reason}` : '';
  if (status === 'retired') return ['subscription-retired', `the subscription is retired${why}`];
  if (status === 'suspended') return ['subscription-suspended', `the subscription is suspended${why}; resuming it sends this delivery again`];
  return ['subscription-not-active', `the subscription is ${status}${why}`];
}
