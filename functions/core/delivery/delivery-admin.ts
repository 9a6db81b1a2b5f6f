/**
 * What a subscriber (or an `admin` client, for any subscription) can see and do about its push
 * deliveries (EDU-18): the recent attempts, the dead letters, sending dead letters again
 * (redrive), and resuming a suspended subscription.
 *
 * What a redrive sends and what it withholds (review item 16) is in redrive.ts; how attempts and
 * dead letters are shown is in delivery-views.ts.
 */
import { API_BASE_PATH } from '../http/api-version.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { KoerierError, problem, problems } from '../http/problems.js';
import { credentialShortfall, type SinkCredentialPolicy } from '../credentials/sink-credential.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription, SubscriptionStatus, SuspensionCause } from '../subscriptions/subscription.js';
import type { Outbox } from '../delivery-message/outbox.js';
import {
  InvalidPageCursorError,
  type DeadLetter,
  type DeadLetterStore,
  type DeliveryLedger,
  type Page,
  type TargetHealthStore,
} from './delivery-records.js';
import { attemptView, deadLetterView } from './delivery-views.js';
import { subscriptionHealth } from './subscription-health.js';
import type { BreakerSettings } from './target-health.js';
import { refuseUnknownParameters } from '../http/query-parameters.js';
import { ATTEMPT_QUERY_PARAMETERS, attemptMatches, readAttemptQuery } from './attempt-query.js';
import { tell, type OperationalEvents } from '../operations/operational-events.js';
import { resumedNotice } from './operational-notices.js';
import { MAX_REDRIVE, parseRedriveSelection, redriveMessages, withheldReason, type Withheld } from './redrive.js';

export interface DeliveryAdminDependencies {
  /** A resume starts the target with a clean slate; the health view reads it. */
  readonly targets: Pick<TargetHealthStore, 'resetTarget' | 'getTarget'>;
  /** How the dispatcher judges the breaker, for the health view. */
  readonly breaker: BreakerSettings;
  readonly ledger: Pick<DeliveryLedger, 'listAttempts'>;
  readonly deadLetters: Pick<DeadLetterStore, 'listDeadLetters' | 'deleteDeadLetters'>;
  readonly subscriptions: {
    get(id: string): Promise<Subscription | undefined>;
    updateStatus(
      id: string,
      status: SubscriptionStatus,
      reason: string,
      expectedVersion?: number,
      suspendedFor?: SuspensionCause,
    ): Promise<unknown>;
  };
  /** Puts new delivery messages on the deliveries queue, or a pull subscription's own queue. */
  readonly outbox: Pick<Outbox, 'enqueue'>;
  readonly audit: Log;
  /** The owners' entitlements as configured now (EDU-7). */
  readonly entitlements: Entitlements;
  /** A subscription suspended for want of an acceptable credential is not resumed by `resume`. */
  readonly sinkCredentials: SinkCredentialPolicy;
  /** Tells a resume as Koerier's operational event (core/operations); absent: not told. */
  readonly operations?: OperationalEvents;
  readonly clock?: Clock;
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

export class DeliveryAdmin {
  private readonly now: Clock;

  constructor(private readonly deps: DeliveryAdminDependencies) {
    this.now = deps.clock ?? systemClock;
  }

  /** GET /subscriptions/{id}/deliveries: recent attempts, newest first; filtered by event, outcome and time (`attempt-query.ts`). */
  async listAttempts(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    refuseUnknownParameters(request, ATTEMPT_QUERY_PARAMETERS);
    const query = readAttemptQuery(request);
    if (!(await this.visible(principal, id))) throw notFound(id);
    const read = async (page: { limit: number; cursor?: string | undefined }) => {
      const found = await this.deps.ledger.listAttempts(id, page);
      return { ...found, items: found.items.filter((record) => attemptMatches(record, query)) };
    };
    return this.page(
      request,
      `${API_BASE_PATH}/subscriptions/${id}/deliveries`,
      read,
      'attempts',
      attemptView,
      query.linkParameters,
    );
  }

  /** GET /subscriptions/{id}/health: the breaker, the failure streak, the last success and the next attempt. */
  async health(principal: Principal, id: string): Promise<HttpResponse> {
    if (!(await this.visible(principal, id))) throw notFound(id);
    const now = this.now();
    const [target, recent] = await Promise.all([
      this.deps.targets.getTarget(id),
      this.deps.ledger.listAttempts(id, { limit: MAX_PAGE_SIZE }),
    ]);
    // The newest page of the history (kept 7 days by default): a success older than it is not named.
    const lastSuccess = recent.items.find((attempt) => attempt.outcome === 'delivered')?.at;
    return jsonResponse(200, { id, ...subscriptionHealth(target, this.deps.breaker, lastSuccess, now) });
  }

  /** GET /subscriptions/{id}/dead-letters: oldest delivery first. */
  async listDeadLetters(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    refuseUnknownParameters(request, ['limit', 'cursor']);
    if (!(await this.visible(principal, id))) throw notFound(id);
    return this.page(
      request,
      `${API_BASE_PATH}/subscriptions/${id}/dead-letters`,
      (page) => this.deps.deadLetters.listDeadLetters(id, page),
      'deadLetters',
      deadLetterView,
    );
  }

  /** POST /subscriptions/{id}/dead-letters/redrive with `{"all": true}` or `{"deliveryIds": [...]}`. */
  async redrive(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    const subscription = await this.visible(principal, id);
    if (!subscription) throw notFound(id);
    const selection = parseRedriveSelection(request.body);
    if (subscription.status !== 'active') {
      const hint = subscription.status === 'suspended' ? ` Resume it first (POST /subscriptions/${id}/resume).` : '';
      throw new KoerierError(
        problem(
          409,
          'subscription-not-active',
          `The subscription is ${subscription.status}; nothing can be delivered to it.${hint}`,
        ),
      );
    }
    const wanted = selection.deliveryIds;
    const withheld: Withheld[] = [];
    const { chosen, seen, more } = await this.collect(
      id,
      (deadLetter) => wanted === undefined || wanted.has(deadLetter.deliveryId),
      subscription,
      withheld,
    );
    const redriven = await this.sendAgain(subscription, chosen);
    this.deps.audit.info('dead letters redriven', {
      subscriptionId: id,
      by: principal.clientId,
      count: redriven.length,
      withheld,
    });
    const notFoundIds = wanted === undefined ? [] : [...wanted].filter((deliveryId) => !seen.has(deliveryId));
    return jsonResponse(202, {
      redriven,
      ...(withheld.length > 0 ? { withheld } : {}),
      ...(notFoundIds.length > 0 ? { notFound: notFoundIds } : {}),
      more,
    });
  }

  /**
   * POST /subscriptions/{id}/pause: an active push subscription is suspended (`paused`) until a
   * resume. The router keeps routing it; each delivery meanwhile is kept as a dead letter
   * (`subscription-suspended`), which the resume sends again. A pull subscription pauses by not
   * receiving (its events wait in its queue), so pausing one is refused.
   */
  async pause(principal: Principal, id: string): Promise<HttpResponse> {
    const subscription = await this.visible(principal, id);
    if (!subscription) throw notFound(id);
    if (subscription.delivery === 'pull') {
      throw new KoerierError(
        problem(
          409,
          'not-a-push-subscription',
          'A pull subscription pauses by not receiving: its events wait in its queue.',
        ),
      );
    }
    if (subscription.status !== 'active') {
      throw new KoerierError(
        problem(
          409,
          'subscription-not-active',
          `The subscription is ${subscription.status}; only an active subscription can be paused.`,
        ),
      );
    }
    await this.deps.subscriptions.updateStatus(
      id,
      'suspended',
      `Paused by ${principal.clientId} at ${new Date(this.now()).toISOString()}.`,
      undefined,
      'paused',
    );
    this.deps.audit.info('subscription paused', { subscriptionId: id, by: principal.clientId });
    return jsonResponse(200, { id, status: 'suspended', suspendedfor: 'paused' });
  }

  /** POST /subscriptions/{id}/resume: a suspended subscription becomes active; what was parked meanwhile goes out again. */
  async resume(principal: Principal, id: string): Promise<HttpResponse> {
    const subscription = await this.visible(principal, id);
    if (!subscription) throw notFound(id);
    if (subscription.status !== 'suspended') {
      throw new KoerierError(
        problem(
          409,
          'subscription-not-suspended',
          `The subscription is ${subscription.status}; only a suspended subscription can be resumed.`,
        ),
      );
    }
    // Resuming does not give a subscription the token every delivery must carry (WH-3).
    const shortfall = credentialShortfall(subscription.credential, this.deps.sinkCredentials);
    if (subscription.suspendedFor === 'credential-required' || shortfall !== undefined) {
      throw new KoerierError(
        problem(
          409,
          'credential-required',
          `The subscription cannot be resumed: ${shortfall ?? 'it needs a new sink credential'}. A PATCH that sets one reactivates it.`,
        ),
      );
    }
    await this.deps.targets.resetTarget(id);
    await this.deps.subscriptions.updateStatus(
      id,
      'active',
      `Resumed by ${principal.clientId} at ${new Date(this.now()).toISOString()}.`,
    );
    let redriven = 0;
    const withheld: Withheld[] = [];
    const ignored = new Set<string>();
    for (let more = true; more;) {
      // Withheld ones stay dead letters: skip them in the next round, or this would never end.
      const batch = await this.collect(
        id,
        (deadLetter) => deadLetter.reason === 'subscription-suspended' && !ignored.has(deadLetter.deliveryId),
        subscription,
        withheld,
      );
      for (const { deliveryId } of withheld) ignored.add(deliveryId);
      redriven += (await this.sendAgain(subscription, batch.chosen)).length;
      more = batch.more;
    }
    this.deps.audit.info('subscription resumed', { subscriptionId: id, by: principal.clientId, redriven, withheld });
    await tell(
      this.deps.operations,
      [resumedNotice(subscription, principal.clientId, redriven, this.now())],
      this.deps.audit,
    );
    return jsonResponse(200, { id, status: 'active', redriven, ...(withheld.length > 0 ? { withheld } : {}) });
  }

  private async visible(principal: Principal, id: string): Promise<Subscription | undefined> {
    const subscription = await this.deps.subscriptions.get(id);
    if (!subscription) return undefined;
    return subscription.owner === principal.clientId || hasScope(principal, scopes.admin) ? subscription : undefined;
  }

  /**
   * Up to MAX_REDRIVE dead letters that `accept` and may still be sent to `subscription`, and
   * whether there may be more; those that may not are added to `withheld`. `seen`: every accepted
   * delivery id, sent or withheld.
   */
  private async collect(
    id: string,
    accept: (deadLetter: DeadLetter) => boolean,
    subscription: Subscription,
    withheld: Withheld[],
  ): Promise<{ chosen: DeadLetter[]; seen: Set<string>; more: boolean }> {
    const chosen: DeadLetter[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await this.deps.deadLetters.listDeadLetters(id, { limit: MAX_PAGE_SIZE, cursor });
      for (const deadLetter of page.items) {
        if (!accept(deadLetter)) continue;
        if (chosen.length === MAX_REDRIVE) return { chosen, seen, more: true };
        seen.add(deadLetter.deliveryId);
        const reason = withheldReason(subscription, deadLetter, this.deps.entitlements);
        if (reason === undefined) chosen.push(deadLetter);
        else withheld.push({ deliveryId: deadLetter.deliveryId, reason });
      }
      cursor = page.cursor;
    } while (cursor);
    return { chosen, seen, more: false };
  }

  /** New deliveries first, then the dead letters go: a failure in between duplicates, never loses. */
  private async sendAgain(
    subscription: Subscription,
    deadLetters: readonly DeadLetter[],
  ): Promise<{ deliveryId: string; newDeliveryId: string }[]> {
    if (deadLetters.length === 0) return [];
    const messages = redriveMessages(subscription.id, deadLetters, this.now());
    await this.deps.outbox.enqueue(subscription, messages);
    await this.deps.deadLetters.deleteDeadLetters(deadLetters);
    return deadLetters.map((deadLetter, index) => ({
      deliveryId: deadLetter.deliveryId,
      newDeliveryId: messages[index]!.deliveryId,
    }));
  }

  private async page<T>(
    request: HttpRequest,
    path: string,
    read: (page: { limit: number; cursor?: string | undefined }) => Promise<Page<T>>,
    member: string,
    view: (item: T) => unknown,
    linkParameters = '',
  ): Promise<HttpResponse> {
    const limitText = request.query['limit'];
    const limit = limitText === undefined ? DEFAULT_PAGE_SIZE : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
      throw new KoerierError(
        problems.badRequest('invalid-parameter', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`),
      );
    }
    try {
      const page = await read({ limit, cursor: request.query['cursor'] || undefined });
      const next =
        page.cursor === undefined
          ? undefined
          : `${path}?limit=${limit}&cursor=${encodeURIComponent(page.cursor)}${linkParameters}`;
      return jsonResponse(200, { [member]: page.items.map(view), next }, next ? { link: `<${next}>; rel="next"` } : {});
    } catch (error) {
      if (error instanceof InvalidPageCursorError)
        throw new KoerierError(problems.badRequest('invalid-parameter', 'cursor is not one this list handed out.'), {
          cause: error,
        });
      throw error;
    }
  }
}

function notFound(id: string): KoerierError {
  return new KoerierError(problems.notFound(`There is no subscription ${id} for this client.`));
}
