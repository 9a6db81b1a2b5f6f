/**
 * An in-memory delivery state (all three delivery ports in one object) that remembers every call, a scripted target and a dispatcher
 * wired to both: the harness of dispatcher-outcomes.test.ts and dispatcher-paths.test.ts.
 */
import type { AttemptResult } from '../../../functions/core/delivery/attempt-outcome.js';
import {
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import type {
  AttemptRecord,
  DeadLetter,
  DeadLetterStore,
  DeliveryLedger,
  DeliveryProgress,
  TargetHealthStore,
} from '../../../functions/core/delivery/delivery-records.js';
import type {
  DeliveryPolicy,
  DeliveryTask,
  DispatcherDependencies,
} from '../../../functions/core/delivery/dispatch-ports.js';
import { HEALTHY, type TargetState } from '../../../functions/core/delivery/target-health.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import type { Overrides } from '../../support/overrides.js';

export const T0 = Date.parse('2026-03-01T12:00:00Z');
export const SUB = '3f0c2a8e-6b1d-4c55-9a3e-0d1f2b3c4d5e';
export const DAY = 86_400;

export const policy: DeliveryPolicy = {
  retry: { initialDelaySeconds: 30, maxDelaySeconds: 3600, windowSeconds: DAY },
  breaker: { failureThreshold: 5, cooldownSeconds: 60 },
  suspendAfterSeconds: 3 * DAY,
  keyTtlSeconds: 7 * DAY,
  historySeconds: DAY,
  deadLetterRetentionSeconds: 2 * DAY,
  rateHorizonMs: 5000,
  maxReceiveCount: 50,
  sendTimeoutMs: 10_000,
  tokenTimeoutMs: 5_000,
  sinkCredentials: 'oauth2-only',
};

export class RecordingState implements TargetHealthStore, DeliveryLedger, DeadLetterStore {
  target: TargetState = HEALTHY;
  readonly calls: string[] = [];
  readonly attempts: { records: readonly AttemptRecord[]; expiresAt: number }[] = [];
  readonly deadLetters: { deadLetter: DeadLetter; expiresAt: number }[] = [];
  readonly progress = new Map<string, { progress: DeliveryProgress; expiresAt: number }>();
  failures = { getTargets: false, recordAttempts: false, putDeadLetter: false };
  async getTarget() {
    return this.target;
  }
  async getTargets(ids: readonly string[]) {
    if (this.failures.getTargets) throw new Error('state unreadable');
    return new Map(ids.map((id) => [id, this.target]));
  }
  /** Results of the next slot reservations (another instance won when false); then true. */
  readonly reserveResults: boolean[] = [];
  probeAvailable = true;
  async reserveSendSlots(_id: string, _expected: number | undefined, next: number) {
    this.calls.push('reserveSendSlots');
    const won = this.reserveResults.shift() ?? true;
    if (won) this.target = { ...this.target, nextSendAt: next };
    return won;
  }
  async takeProbe(_id: string, now: number, until: number) {
    this.calls.push(`takeProbe ${until - now}`);
    return this.probeAvailable;
  }
  async releaseProbe(_id: string, until: number) {
    this.calls.push(`releaseProbe ${until - T0}`);
  }
  async recordTargetSuccess() {
    this.calls.push('recordTargetSuccess');
    this.target = HEALTHY;
  }
  async recordTargetFailures(_id: string, count: number, now: number, _probe = false) {
    this.calls.push(`recordTargetFailures ${count}`);
    this.target = {
      ...this.target,
      consecutiveFailures: this.target.consecutiveFailures + count,
      lastFailureAt: now,
      failingSince: this.target.failingSince ?? now,
    };
    return this.target;
  }
  async recordThrottle() {
    this.calls.push('recordThrottle');
  }
  async resetTarget() {}
  async getProgress(_id: string, deliveryId: string) {
    return this.progress.get(deliveryId)?.progress;
  }
  async putProgress(_id: string, progress: DeliveryProgress, expiresAt: number) {
    this.progress.set(progress.deliveryId, { progress, expiresAt });
  }
  async recordAttempts(records: readonly AttemptRecord[], expiresAt: number) {
    if (this.failures.recordAttempts) throw new Error('history unwritable');
    this.attempts.push({ records, expiresAt });
  }
  async listAttempts() {
    return { items: [] };
  }
  async putDeadLetter(deadLetter: DeadLetter, expiresAt: number) {
    if (this.failures.putDeadLetter) throw new Error('dead letter unwritable');
    this.deadLetters.push({ deadLetter, expiresAt });
  }
  async listDeadLetters() {
    return { items: [] };
  }
  async deleteDeadLetters() {}
}

export function subscription(fields: Overrides<Subscription> = {}): Subscription {
  return {
    id: SUB,
    owner: 'subscriber',
    sink: 'https://receiver.test/hook',
    delivery: 'push',
    contentMode: 'structured',
    batchSupported: false,
    validation: 'agreed',
    status: 'active',
    credential: { kind: 'oauth2-client-credentials', ciphertext: 'sealed' },
    createdAt: new Date(T0).toISOString(),
    updatedAt: new Date(T0).toISOString(),
    ...fields,
  } as Subscription;
}

export function setup(
  options: {
    answers?: AttemptResult[];
    subscription?: Overrides<Subscription> | null;
    /** What a read with `fresh` returns, when it differs from the cached one. */
    freshSubscription?: Overrides<Subscription> | null;
    now?: number;
    accessToken?: DispatcherDependencies['accessToken'];
  } = {},
) {
  const store = new RecordingState();
  const logs: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const statusUpdates: unknown[][] = [];
  const sent: string[] = [];
  const sentHeaders: Record<string, string>[] = [];
  const reads: string[] = [];
  const answers = [...(options.answers ?? [])];
  const clock = { now: options.now ?? T0 };
  const deps: { -readonly [K in keyof DispatcherDependencies]: DispatcherDependencies[K] } = {
    targets: store,
    ledger: store,
    deadLetters: store,
    subscriptions: {
      get: async (_id, read) => {
        reads.push(read?.fresh === true ? 'fresh' : 'cached');
        const chosen =
          read?.fresh === true && 'freshSubscription' in options ? options.freshSubscription : options.subscription;
        return chosen === null ? undefined : subscription(chosen ?? {});
      },
      updateStatus: async (...args: unknown[]) => void statusUpdates.push(args),
    },
    accessToken: options.accessToken ?? (async () => 'access-token'),
    send: async (request) => {
      sent.push(request.body.toString('utf8'));
      sentHeaders.push({ ...request.headers });
      return answers.shift() ?? { status: 204, headers: {}, latencyMs: 7 };
    },
    outbox: { enqueue: async () => undefined },
    policy,
    origin: 'koerier.test',
    log: {
      info: (message, fields) => void logs.push({ level: 'info', message, fields }),
      warn: (message, fields) => void logs.push({ level: 'warn', message, fields }),
      error: (message, fields) => void logs.push({ level: 'error', message, fields }),
    },
    clock: () => clock.now,
    random: () => 0.5,
    sleep: async () => undefined,
  };
  const messages = (...logged: string[]) => logs.filter((l) => logged.includes(l.message));
  return { store, logs, messages, statusUpdates, sent, sentHeaders, reads, deps, clock };
}

let counter = 0;
export function task(message: Partial<DeliveryMessage> = {}, receiveCount = 1): DeliveryTask {
  counter++;
  const full: DeliveryMessage = {
    version: 1,
    deliveryId: `0b7e5c1a-2d3f-4a5b-8c6d-${String(counter).padStart(12, '0')}`,
    subscriptionId: SUB,
    events: [`{"id":"${counter}"}`],
    createdAt: T0,
    ...message,
  };
  return { messageId: `m-${full.deliveryId}`, body: encodeDeliveryMessage(full), receiveCount };
}

export const answered = (status: number, headers: Record<string, string> = {}): AttemptResult => ({
  status,
  headers,
  latencyMs: 12,
});
