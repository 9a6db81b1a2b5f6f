/**
 * Settling received events by lock token (docs/PULL.md, CARD-7, EDU-17): acknowledge, release,
 * renew the lock, reject, each token answered on its own. Koerier answers a token itself when it
 * may not reach SQS: forged or foreign (`InvalidToken`, `NotOwner`), repeated in the call
 * (`DuplicateToken`), past its own expiry, or given up by a release or reject (`LockLost`, issue
 * 28 item 14e). The last one needs memory: a released token is still inside its `lockeduntil`, and
 * SQS takes an outdated receipt handle once the message was received again — an acknowledge would
 * then delete, a release hide, the event another consumer holds now. So a release and a reject
 * first record the lock as given up (GivenUpLocks), and every settle asks before it goes to SQS.
 */
import { jsonResponse, type HttpResponse } from '../http/messages.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { lockExpiry, lockTokenVerdict, openLockToken, sealLockToken, type LockTokenContents } from './lock-token.js';
import { parseSettleRequest, type SettleAction, type SettleRequest } from './pull-requests.js';
import type { GivenUpLocks, PullQueues, QueueEntryOutcome, RejectionMarks } from './pull-queues.js';
import { PULL_BLOCK_RETRY_SECONDS, type OrderedPull } from './ordered-pull.js';

export interface SettlementDependencies {
  readonly queues: PullQueues;
  readonly rejections: RejectionMarks;
  readonly givenUpLocks: GivenUpLocks;
  /** The AES-256 key lock tokens are sealed with (32 bytes), the same for every container. */
  lockTokenKey(): Promise<Buffer>;
  readonly clock: Clock;
  readonly log: Log;
  /** Ordered subscriptions (docs/ORDERING.md, "Pull"): an acknowledgement releases its key's next event. */
  readonly ordered?: Pick<OrderedPull, 'afterAcknowledged'>;
}

export type SettleFailureCode = 'LockLost' | 'InvalidToken' | 'NotOwner' | 'DuplicateToken' | 'Unavailable';

/**
 * How long a given-up lock is remembered: SQS ends every lock 12 hours after its receive at the
 * latest, so no token of that receipt handle, renewed or not, is accepted longer; a minute more
 * for the clocks of other containers.
 */
export const GIVEN_UP_MEMORY_SECONDS = 12 * 60 * 60 + 60;

interface Succeeded {
  readonly locktoken: string;
  readonly newlocktoken?: string;
  readonly lockeduntil?: string;
}

interface Failed {
  readonly locktoken: string;
  readonly error: { readonly code: SettleFailureCode; readonly message: string };
}

/** A token that opened, is the caller's and is within its lock. */
interface Held {
  readonly token: string;
  readonly contents: LockTokenContents;
  readonly entryId: string;
}

const FAILURE_MESSAGES: Record<SettleFailureCode, string> = {
  LockLost: 'the lock has expired or was given up; the event is (or will be) delivered again',
  InvalidToken: 'not a lock token of this Koerier',
  NotOwner: 'the lock token belongs to another subscription or another client',
  DuplicateToken: 'the same lock token appears earlier in this request',
  Unavailable: 'the queue did not take the change; try again',
};

export async function settleLocks(
  deps: SettlementDependencies,
  clientId: string,
  subscription: Subscription,
  action: SettleAction,
  body: Buffer,
): Promise<HttpResponse> {
  const request = parseSettleRequest(body, action);
  const key = await deps.lockTokenKey();
  const now = deps.clock();
  const failed: Failed[] = [];
  const opened: Held[] = [];
  const seen = new Set<string>();
  request.lockTokens.forEach((token, index) => {
    if (seen.has(token)) return failed.push(failure(token, 'DuplicateToken'));
    seen.add(token);
    const verdict = lockTokenVerdict(openLockToken(token, key), { subscriptionId: subscription.id, clientId, now });
    if (!verdict.ok) return failed.push(failure(token, verdict.code));
    opened.push({ token, contents: verdict.contents, entryId: String(index) });
    return undefined;
  });
  const outcomes = await settleHeld(
    deps,
    subscription,
    action,
    request,
    await stillHeld(deps, subscription.id, opened),
  );
  const succeeded: Succeeded[] = [];
  for (const entry of opened) {
    const outcome = outcomes.get(entry.entryId) ?? 'failed';
    if (outcome === 'lock-lost') failed.push(failure(entry.token, 'LockLost'));
    else if (outcome === 'failed') failed.push(failure(entry.token, 'Unavailable'));
    else if (action === 'renew-lock') {
      const renewed = { ...entry.contents, lockedUntil: lockExpiry(now, request.lockSeconds) };
      succeeded.push({
        locktoken: entry.token,
        newlocktoken: sealLockToken(renewed, key),
        lockeduntil: new Date(renewed.lockedUntil).toISOString(),
      });
    } else succeeded.push({ locktoken: entry.token });
  }
  deps.log.info('pull settle', {
    subscriptionId: subscription.id,
    action,
    succeeded: succeeded.length,
    failed: failed.length,
  });
  return jsonResponse(200, { succeeded, failed }, { 'cache-control': 'no-store' });
}

/** The opened tokens whose lock was not given up, and an outcome for each of the others: LockLost, or Unavailable when that could not be read. */
async function stillHeld(
  deps: SettlementDependencies,
  subscriptionId: string,
  opened: readonly Held[],
): Promise<{ held: Held[]; decided: Map<string, QueueEntryOutcome> }> {
  if (opened.length === 0) return { held: [], decided: new Map() };
  const givenUp = await deps.givenUpLocks
    .givenUp(
      subscriptionId,
      opened.map(({ contents }) => contents.receiptHandle),
    )
    .catch((error: unknown) => {
      deps.log.warn('pull settle: given-up locks unreadable', { subscriptionId, error: String(error) });
      return undefined;
    });
  if (givenUp === undefined) return { held: [], decided: new Map(opened.map(({ entryId }) => [entryId, 'failed'])) };
  const lost = opened.filter(({ contents }) => givenUp.has(contents.receiptHandle));
  return {
    held: opened.filter(({ contents }) => !givenUp.has(contents.receiptHandle)),
    decided: new Map(lost.map(({ entryId }) => [entryId, 'lock-lost'])),
  };
}

/** SQS's outcome per entry id, next to the ones decided before. */
async function settleHeld(
  deps: SettlementDependencies,
  subscription: Subscription,
  action: SettleAction,
  request: SettleRequest,
  { held, decided }: { held: readonly Held[]; decided: Map<string, QueueEntryOutcome> },
): Promise<ReadonlyMap<string, QueueEntryOutcome>> {
  let settling = held;
  if (action === 'release' || action === 'reject') {
    // Given up before SQS is asked: once the event is visible, another receive may take it at once.
    const expiresAt = Math.ceil(deps.clock() / 1000) + GIVEN_UP_MEMORY_SECONDS;
    const recorded = await deps.givenUpLocks
      .giveUp(
        subscription.id,
        held.map(({ contents }) => contents.receiptHandle),
        expiresAt,
      )
      .then(
        () => true,
        () => false,
      );
    if (!recorded) settling = [];
  }
  // A held entry without an outcome (its lock could not be recorded as given up) is answered Unavailable.
  return new Map([...decided, ...(await apply(deps, subscription, action, request, settling))]);
}

async function apply(
  deps: SettlementDependencies,
  subscription: Subscription,
  action: SettleAction,
  request: SettleRequest,
  held: readonly Held[],
): Promise<ReadonlyMap<string, QueueEntryOutcome>> {
  if (held.length === 0) return new Map();
  const id = subscription.id;
  const entries = held.map(({ contents, entryId }) => ({ entryId, receiptHandle: contents.receiptHandle }));
  switch (action) {
    case 'acknowledge': {
      const deleted = await deps.queues.delete(id, entries);
      if (deps.ordered === undefined || subscription.ordering === undefined) return deleted;
      const acknowledged = held.map(({ entryId, contents }) => ({
        entryId,
        ...(contents.lane ? { lane: contents.lane } : {}),
      }));
      return deps.ordered.afterAcknowledged(subscription, acknowledged, deleted);
    }
    case 'release':
      return deps.queues.changeVisibility(
        id,
        entries.map((entry) => ({ ...entry, seconds: request.delaySeconds })),
      );
    case 'renew-lock':
      return deps.queues.changeVisibility(
        id,
        entries.map((entry) => ({ ...entry, seconds: request.lockSeconds })),
      );
    case 'reject': {
      // Under `block` an ordered event's reject is not a dead letter: it is handed out again after a
      // while, its key's later events waiting, until acknowledged, `maxdeliverycount` is reached or
      // the subscription is paused (docs/ORDERING.md, "Pull" 5). No mark: nothing to dead-letter.
      const retried = held.map(({ contents }) => subscription.ordering?.onFailure === 'block' && !!contents.lane);
      // Marked first, then made visible: the next receive moves it to the dead letters.
      const expiresAt = Math.ceil((deps.clock() + (subscription.pull?.retentionSeconds ?? 0) * 1000) / 1000);
      const marked = await Promise.all(
        held.map(({ contents }, index) =>
          retried[index]
            ? true
            : deps.rejections
                .mark(id, contents.messageId, request.reason || 'rejected by the consumer', expiresAt)
                .then(
                  () => true,
                  () => false,
                ),
        ),
      );
      const outcomes = new Map<string, QueueEntryOutcome>(
        held.filter((_, index) => !marked[index]).map(({ entryId }) => [entryId, 'failed']),
      );
      const visible = await deps.queues.changeVisibility(
        id,
        entries.flatMap((entry, index) =>
          marked[index] ? [{ ...entry, seconds: retried[index] ? PULL_BLOCK_RETRY_SECONDS : 0 }] : [],
        ),
      );
      for (const [entryId, outcome] of visible) outcomes.set(entryId, outcome);
      return outcomes;
    }
  }
}

function failure(locktoken: string, code: SettleFailureCode): Failed {
  return { locktoken, error: { code, message: FAILURE_MESSAGES[code] } };
}
