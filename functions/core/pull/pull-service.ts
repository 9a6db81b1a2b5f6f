/**
 * Pull delivery's use cases (docs/PULL.md, CARD-7, EDU-17): receive events with a lock, and settle
 * them by lock token — acknowledge, release, renew the lock, reject. The caller (functions/app/
 * pull-app.ts) has already authenticated the client and found its own pull subscription.
 *
 * Receive: one long poll for a single message (so it returns as soon as anything is there, on SQS
 * and on the laptop's emulator alike, which ends a long poll only when the batch is full), then
 * short polls side by side to fill up to `maxevents`. Messages received more than
 * `maxdeliverycount` times, or marked by a reject, go to the subscription's dead letters instead.
 */
import { randomUUID } from 'node:crypto';
import { jsonResponse, type HttpResponse } from '../http/messages.js';
import { KoerierError, problem } from '../http/problems.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { DeadLetterStore } from '../delivery/delivery-records.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { lockExpiry, lockTokenVerdict, openLockToken, sealLockToken, type LockTokenContents } from './lock-token.js';
import { parseReceiveRequest, parseSettleRequest, type ReceiveRequest, type SettleAction, type SettleRequest } from './pull-requests.js';
import type { PollLeases, PulledMessage, PullQueues, QueueEntryOutcome, RejectionMarks } from './pull-queues.js';
import { assembleAnswer, dispositionOf, type Disposition, type LockView } from './receive-assembly.js';

export interface PullDependencies {
  readonly queues: PullQueues;
  readonly rejections: RejectionMarks;
  readonly deadLetters: Pick<DeadLetterStore, 'putDeadLetter'>;
  /** The AES-256 key lock tokens are sealed with (32 bytes), the same for every container. */
  lockTokenKey(): Promise<Buffer>;
  readonly clock: Clock;
  /** How long a dead letter is kept (the push setting, one dead-letter API). */
  readonly deadLetterRetentionSeconds: number;
  readonly log: Log;
  /** Caps concurrent long polls per subscription and per client, across containers. */
  readonly leases: PollLeases;
  readonly maxPollsPerSubscription: number;
  readonly maxPollsPerClient: number;
}

/** A poll's slot lapses after this even if its container died: above the pull function's timeout (28 s). */
const LEASE_MS = 35_000;
/** What a refused long poll is told to wait: polls end within 20 s, most much sooner. */
const RETRY_AFTER_SECONDS = 5;

/** SQS hands out at most ten messages per ReceiveMessage. */
const SQS_BATCH = 10;

export type SettleFailureCode = 'LockLost' | 'InvalidToken' | 'NotOwner' | 'DuplicateToken' | 'Unavailable';

interface Succeeded {
  readonly locktoken: string;
  readonly newlocktoken?: string;
  readonly lockeduntil?: string;
}

interface Failed {
  readonly locktoken: string;
  readonly error: { readonly code: SettleFailureCode; readonly message: string };
}

const FAILURE_MESSAGES: Record<SettleFailureCode, string> = {
  LockLost: 'the lock has expired or was given up; the event is (or will be) delivered again',
  InvalidToken: 'not a lock token of this Koerier',
  NotOwner: 'the lock token belongs to another subscription or another client',
  DuplicateToken: 'the same lock token appears earlier in this request',
  Unavailable: 'the queue did not take the change; try again',
};

export class PullService {
  constructor(private readonly deps: PullDependencies) {}

  async receive(clientId: string, subscription: Subscription, body: Buffer): Promise<HttpResponse> {
    const request = parseReceiveRequest(body);
    const { waitSeconds } = request;
    // A short poll (no wait) holds nothing for long, so only long polls take a slot.
    if (waitSeconds === 0) return this.receiveNow(clientId, subscription, request);
    const leaseId = randomUUID();
    const now = this.deps.clock();
    const scopes = [
      { scope: `sub#${subscription.id}`, limit: this.deps.maxPollsPerSubscription, what: 'this subscription' },
      { scope: `client#${clientId}`, limit: this.deps.maxPollsPerClient, what: 'this client' },
    ];
    const held: { scope: string; slot: number }[] = [];
    try {
      for (const { scope, limit, what } of scopes) {
        const slot = await this.deps.leases.take(scope, limit, leaseId, now, now + LEASE_MS);
        if (slot === undefined) {
          this.deps.log.info('pull receive refused: too many long polls', { subscriptionId: subscription.id, clientId, scope: what });
          throw new KoerierError(
            problem(
              429,
              'too-many-polls',
              'Too Many Long Polls',
              `${limit} long polls for ${what} are waiting already; retry later or poll less often at once.`,
            ),
            { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } },
          );
        }
        held.push({ scope, slot });
      }
      return await this.receiveNow(clientId, subscription, request);
    } finally {
      await Promise.all(
        held.map(({ scope, slot }) =>
          this.deps.leases
            .give(scope, slot, leaseId)
            .catch((error: unknown) => this.deps.log.warn('poll lease not released', { scope, error: error instanceof Error ? error.message : String(error) })),
        ),
      );
    }
  }

  private async receiveNow(clientId: string, subscription: Subscription, request: ReceiveRequest): Promise<HttpResponse> {
    const { maxEvents, waitSeconds, lockSeconds } = request;
    const id = subscription.id;
    const startedAt = this.deps.clock();
    const visibility = { visibilitySeconds: lockSeconds };
    const received: PulledMessage[] = await this.deps.queues.receive(id, { max: 1, waitSeconds, ...visibility });
    // Fill up with short polls side by side; stop when a round brings nothing new.
    while (received.length > 0 && received.length < maxEvents) {
      const wanted = maxEvents - received.length;
      const rounds = Array.from({ length: Math.ceil(wanted / SQS_BATCH) }, (_, index) => Math.min(SQS_BATCH, wanted - index * SQS_BATCH));
      const more = (await Promise.all(rounds.map((max) => this.deps.queues.receive(id, { max, waitSeconds: 0, ...visibility })))).flat();
      if (more.length === 0) break;
      received.push(...more);
    }

    const dispositions = await this.dispositions(subscription, received);
    await this.deadLetter(subscription, dispositions);
    const key = await this.deps.lockTokenKey();
    const lockedUntil = lockExpiry(startedAt, lockSeconds);
    const deliveries = dispositions.filter((d): d is Extract<Disposition, { kind: 'deliver' }> => d.kind === 'deliver').slice(0, maxEvents);
    const entries = deliveries.map(({ message, delivery }) => ({
      event: delivery.events[0]!,
      lock: lockView(
        {
          subscriptionId: id,
          clientId,
          messageId: message.messageId,
          receiptHandle: message.receiptHandle,
          lockedUntil,
          deliveryCount: message.receiveCount,
          deliveryKey: delivery.deliveryId,
        },
        key,
      ),
    }));
    const answer = assembleAnswer(entries);
    // What did not fit (or came beyond maxevents) goes back at once rather than waiting out its lock.
    const leftOver = dispositions.filter((d) => d.kind === 'deliver').slice(answer.included);
    if (leftOver.length > 0) {
      await this.deps.queues.changeVisibility(
        id,
        leftOver.map((d, index) => ({ entryId: String(index), receiptHandle: d.message.receiptHandle, seconds: 0 })),
      );
    }
    this.deps.log.info('pull receive', { subscriptionId: id, received: received.length, delivered: answer.included, returned: leftOver.length });
    return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: answer.body };
  }

  async settle(clientId: string, subscription: Subscription, action: SettleAction, body: Buffer): Promise<HttpResponse> {
    const request = parseSettleRequest(body, action);
    const key = await this.deps.lockTokenKey();
    const now = this.deps.clock();
    const failed: Failed[] = [];
    const valid: { token: string; contents: LockTokenContents; entryId: string }[] = [];
    const seen = new Set<string>();
    request.lockTokens.forEach((token, index) => {
      if (seen.has(token)) return failed.push(failure(token, 'DuplicateToken'));
      seen.add(token);
      const verdict = lockTokenVerdict(openLockToken(token, key), { subscriptionId: subscription.id, clientId, now });
      if (!verdict.ok) return failed.push(failure(token, verdict.code));
      valid.push({ token, contents: verdict.contents, entryId: String(index) });
      return undefined;
    });
    const outcomes = await this.apply(subscription, action, request, valid);
    const succeeded: Succeeded[] = [];
    for (const entry of valid) {
      const outcome = outcomes.get(entry.entryId) ?? 'failed';
      if (outcome === 'lock-lost') failed.push(failure(entry.token, 'LockLost'));
      else if (outcome === 'failed') failed.push(failure(entry.token, 'Unavailable'));
      else if (action === 'renew-lock') {
        const renewed = { ...entry.contents, lockedUntil: lockExpiry(now, request.lockSeconds) };
        succeeded.push({ locktoken: entry.token, newlocktoken: sealLockToken(renewed, key), lockeduntil: new Date(renewed.lockedUntil).toISOString() });
      } else succeeded.push({ locktoken: entry.token });
    }
    this.deps.log.info('pull settle', { subscriptionId: subscription.id, action, succeeded: succeeded.length, failed: failed.length });
    return jsonResponse(200, { succeeded, failed }, { 'cache-control': 'no-store' });
  }

  private async apply(
    subscription: Subscription,
    action: SettleAction,
    request: SettleRequest,
    valid: readonly { contents: LockTokenContents; entryId: string }[],
  ): Promise<ReadonlyMap<string, QueueEntryOutcome>> {
    if (valid.length === 0) return new Map();
    const id = subscription.id;
    const entries = valid.map(({ contents, entryId }) => ({ entryId, receiptHandle: contents.receiptHandle }));
    switch (action) {
      case 'acknowledge':
        return this.deps.queues.delete(id, entries);
      case 'release':
        return this.deps.queues.changeVisibility(
          id,
          entries.map((entry) => ({ ...entry, seconds: request.delaySeconds })),
        );
      case 'renew-lock':
        return this.deps.queues.changeVisibility(
          id,
          entries.map((entry) => ({ ...entry, seconds: request.lockSeconds })),
        );
      case 'reject': {
        // Marked first, then made visible: the next receive moves it to the dead letters.
        const expiresAt = Math.ceil((this.deps.clock() + (subscription.pull?.retentionSeconds ?? 0) * 1000) / 1000);
        const marked = await Promise.all(
          valid.map(({ contents }) =>
            this.deps.rejections.mark(id, contents.messageId, request.reason || 'rejected by the consumer', expiresAt).then(
              () => true,
              () => false,
            ),
          ),
        );
        const outcomes = new Map<string, QueueEntryOutcome>(valid.filter((_, index) => !marked[index]).map(({ entryId }) => [entryId, 'failed']));
        const visible = await this.deps.queues.changeVisibility(
          id,
          entries.filter((_, index) => marked[index]).map((entry) => ({ ...entry, seconds: 0 })),
        );
        for (const [entryId, outcome] of visible) outcomes.set(entryId, outcome);
        return outcomes;
      }
    }
  }

  private async dispositions(subscription: Subscription, received: readonly PulledMessage[]): Promise<Disposition[]> {
    // Only a message received before can carry a reject's mark: a first delivery costs no lookup.
    const again = received.filter((message) => message.receiveCount > 1).map((message) => message.messageId);
    const rejections = again.length > 0 ? await this.deps.rejections.find(subscription.id, again) : new Map<string, string>();
    const maxDeliveryCount = subscription.pull?.maxDeliveryCount ?? Number.MAX_SAFE_INTEGER;
    return received.map((message) => dispositionOf(message, maxDeliveryCount, rejections));
  }

  /** Dead letters first, then out of the queue: a failure in between delivers again, never loses. */
  private async deadLetter(subscription: Subscription, dispositions: readonly Disposition[]): Promise<void> {
    const dead = dispositions.filter((d): d is Extract<Disposition, { kind: 'dead-letter' }> => d.kind === 'dead-letter');
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
            ...(delivery.redriveOf === undefined ? {} : { redriveOf: delivery.redriveOf }),
          },
          expiresAt,
        ),
      ),
    );
    await this.deps.queues.delete(
      subscription.id,
      dead.map(({ message }, index) => ({ entryId: String(index), receiptHandle: message.receiptHandle })),
    );
    const rejected = dead.filter((d) => d.reason === 'rejected').map((d) => d.message.messageId);
    if (rejected.length > 0) await this.deps.rejections.clear(subscription.id, rejected);
    this.deps.log.info('pull events dead-lettered', { subscriptionId: subscription.id, count: dead.length, reasons: dead.map((d) => d.reason) });
  }
}

function lockView(contents: LockTokenContents, key: Buffer): LockView {
  return {
    locktoken: sealLockToken(contents, key),
    lockeduntil: new Date(contents.lockedUntil).toISOString(),
    deliverycount: contents.deliveryCount,
    deliverykey: contents.deliveryKey,
  };
}

function failure(locktoken: string, code: SettleFailureCode): Failed {
  return { locktoken, error: { code, message: FAILURE_MESSAGES[code] } };
}
