/**
 * What a subscriber (or an `admin` client, for any subscription) can see and do about its push
 * deliveries (EDU-18): the recent attempts, the dead letters, sending dead letters again
 * (redrive), and resuming a suspended subscription.
 *
 * A redrive is a new delivery operation with a new Idempotency-Key (EDU-IDEM-13), linked to the
 * old one by `redriveOf`. Keeping the old key would look friendlier to deduplication, but a
 * receiver stores the response of every completed operation under its key and replays it
 * (EDU-IDEM-14): a delivery that died on a 4xx would get that same 4xx back for ever. And the
 * automatic retries of the first operation are over, which is exactly when the profile says a
 * new request takes a new key (section 8.3.5). Receivers still recognise the event itself by
 * `source` + `id` (CE-17, EDU-IDEM-15).
 *
 * Nothing is sent again on the strength of an old decision (review item 16): the router checked
 * entitlement and filters when the event was routed, but a grant may have been revoked or the
 * filters changed since. A redrive and a resume re-check every event of a dead letter against the
 * owner's entitlements as configured now and the subscription's filters as they are now; a dead
 * letter with an event that fails either is not sent and stays where it is, untouched, until its
 * retention ends (a grant that comes back makes it redrivable again). The answer lists it under
 * `withheld` with the reason (`not-entitled`, `no-longer-matches`), and the audit log records it.
 */
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import { readStoredEvent } from '../cloudevents/index.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { problem, problemResponse, problems } from '../http/problems.js';
import { credentialShortfall, type SinkCredentialPolicy } from '../credentials/sink-credential.js';
import { subscriptionMatches } from '../routing/route-keys.js';
import { entitledToEvent, type Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription, SubscriptionStatus } from '../subscriptions/subscription.js';
import type { DeliveryMessage } from '../delivery-message/delivery-message.js';
import {
  InvalidPageCursorError,
  type AttemptRecord,
  type DeadLetter,
  type DeadLetterStore,
  type DeliveryLedger,
  type Page,
  type TargetHealthStore,
} from './delivery-records.js';

export interface DeliveryAdminDependencies {
  /** A resume starts the target with a clean slate. */
  readonly targets: Pick<TargetHealthStore, 'resetTarget'>;
  readonly ledger: Pick<DeliveryLedger, 'listAttempts'>;
  readonly deadLetters: Pick<DeadLetterStore, 'listDeadLetters' | 'deleteDeadLetters'>;
  readonly subscriptions: {
    get(id: string): Promise<Subscription | undefined>;
    updateStatus(id: string, status: SubscriptionStatus, reason: string): Promise<unknown>;
  };
  /** Puts new delivery messages on the deliveries queue, or a pull subscription's own queue. */
  enqueue(subscription: Subscription, messages: readonly DeliveryMessage[]): Promise<void>;
  readonly audit: Log;
  /** The owners' entitlements as configured now (EDU-7). */
  readonly entitlements: Entitlements;
  /** A subscription suspended for want of an acceptable credential is not resumed by `resume`. */
  readonly sinkCredentials: SinkCredentialPolicy;
  readonly clock?: Clock;
}

/** Why a dead letter is not sent again. */
export type WithheldReason = 'not-entitled' | 'no-longer-matches';

interface Withheld {
  readonly deliveryId: string;
  readonly reason: WithheldReason;
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;
/** Dead letters one redrive request sends at most; `more: true` says to call again. */
export const MAX_REDRIVE = 500;

export class DeliveryAdmin {
  private readonly now: Clock;

  constructor(private readonly deps: DeliveryAdminDependencies) {
    this.now = deps.clock ?? systemClock;
  }

  /** GET /subscriptions/{id}/deliveries: recent attempts, newest first. */
  async listAttempts(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    if (!(await this.visible(principal, id))) return notFound(id);
    return this.page(request, `/subscriptions/${id}/deliveries`, (page) => this.deps.ledger.listAttempts(id, page), 'attempts', attemptView);
  }

  /** GET /subscriptions/{id}/dead-letters: oldest delivery first. */
  async listDeadLetters(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    if (!(await this.visible(principal, id))) return notFound(id);
    return this.page(request, `/subscriptions/${id}/dead-letters`, (page) => this.deps.deadLetters.listDeadLetters(id, page), 'deadLetters', deadLetterView);
  }

  /** POST /subscriptions/{id}/dead-letters/redrive with `{"all": true}` or `{"deliveryIds": [...]}`. */
  async redrive(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    const subscription = await this.visible(principal, id);
    if (!subscription) return notFound(id);
    const selection = parseSelection(request.body);
    if ('problem' in selection) return problemResponse(selection.problem);
    if (subscription.status !== 'active') {
      const hint = subscription.status === 'suspended' ? ` Resume it first (POST /subscriptions/${id}/resume).` : '';
      return problemResponse(
        problem(
          409,
          'subscription-not-active',
          'Subscription Not Active',
          `The subscription is ${subscription.status}; nothing can be delivered to it.${hint}`,
        ),
      );
    }
    const wanted = selection.deliveryIds;
    const withheld: Withheld[] = [];
    const { chosen, seen, more } = await this.collect(id, (deadLetter) => wanted === undefined || wanted.has(deadLetter.deliveryId), subscription, withheld);
    const redriven = await this.sendAgain(subscription, chosen);
    this.deps.audit.info('dead letters redriven', { subscriptionId: id, by: principal.clientId, count: redriven.length, withheld });
    const notFoundIds = wanted === undefined ? [] : [...wanted].filter((deliveryId) => !seen.has(deliveryId));
    return jsonResponse(202, { redriven, ...(withheld.length > 0 ? { withheld } : {}), ...(notFoundIds.length > 0 ? { notFound: notFoundIds } : {}), more });
  }

  /** POST /subscriptions/{id}/resume: a suspended subscription becomes active; what was parked meanwhile goes out again. */
  async resume(principal: Principal, id: string): Promise<HttpResponse> {
    const subscription = await this.visible(principal, id);
    if (!subscription) return notFound(id);
    if (subscription.status !== 'suspended') {
      return problemResponse(
        problem(
          409,
          'subscription-not-suspended',
          'Subscription Not Suspended',
          `The subscription is ${subscription.status}; only a suspended subscription can be resumed.`,
        ),
      );
    }
    // Resuming does not give a subscription the token every delivery must carry (WH-3).
    const shortfall = credentialShortfall(subscription.credential, this.deps.sinkCredentials);
    if (subscription.suspendedFor === 'credential-required' || shortfall !== undefined) {
      return problemResponse(
        problem(
          409,
          'credential-required',
          'Credential Required',
          `The subscription cannot be resumed: ${shortfall ?? 'it needs a new sink credential'}. A PATCH that sets one reactivates it.`,
        ),
      );
    }
    await this.deps.targets.resetTarget(id);
    await this.deps.subscriptions.updateStatus(id, 'active', `Resumed by ${principal.clientId} at ${new Date(this.now()).toISOString()}.`);
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
      const page = await this.deps.deadLetters.listDeadLetters(id, { limit: MAX_PAGE_SIZE, ...(cursor ? { cursor } : {}) });
      for (const deadLetter of page.items) {
        if (!accept(deadLetter)) continue;
        if (chosen.length === MAX_REDRIVE) return { chosen, seen, more: true };
        seen.add(deadLetter.deliveryId);
        const reason = this.withheldReason(subscription, deadLetter);
        if (reason === undefined) chosen.push(deadLetter);
        else withheld.push({ deliveryId: deadLetter.deliveryId, reason });
      }
      cursor = page.cursor;
    } while (cursor);
    return { chosen, seen, more: false };
  }

  /** Why the dead letter may not go to the subscription as it is now; undefined when it may. */
  private withheldReason(subscription: Subscription, deadLetter: DeadLetter): WithheldReason | undefined {
    for (const json of deadLetter.events) {
      const event = readStoredEvent(json);
      if (!entitledToEvent(subscription.owner, event, this.deps.entitlements)) return 'not-entitled';
      if (!subscriptionMatches(subscription, event.attributes)) return 'no-longer-matches';
    }
    return undefined;
  }

  /** New deliveries first, then the dead letters go: a failure in between duplicates, never loses. */
  private async sendAgain(subscription: Subscription, deadLetters: readonly DeadLetter[]): Promise<{ deliveryId: string; newDeliveryId: string }[]> {
    if (deadLetters.length === 0) return [];
    const id = subscription.id;
    const createdAt = this.now();
    const messages = deadLetters.map((deadLetter): DeliveryMessage => ({
      version: 1,
      deliveryId: randomUUID(),
      subscriptionId: id,
      events: deadLetter.events,
      createdAt,
      redriveOf: deadLetter.deliveryId,
    }));
    await this.deps.enqueue(subscription, messages);
    await this.deps.deadLetters.deleteDeadLetters(deadLetters);
    return deadLetters.map((deadLetter, index) => ({ deliveryId: deadLetter.deliveryId, newDeliveryId: messages[index]!.deliveryId }));
  }

  private async page<T>(
    request: HttpRequest,
    path: string,
    read: (page: { limit: number; cursor?: string }) => Promise<Page<T>>,
    member: string,
    view: (item: T) => unknown,
  ): Promise<HttpResponse> {
    const limitText = request.query['limit'];
    const limit = limitText === undefined ? DEFAULT_PAGE_SIZE : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
      return problemResponse(problems.badRequest('invalid-parameter', 'Invalid Parameter', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`));
    }
    try {
      const page = await read({ limit, ...(request.query['cursor'] ? { cursor: request.query['cursor'] } : {}) });
      const next = page.cursor === undefined ? undefined : `${path}?limit=${limit}&cursor=${encodeURIComponent(page.cursor)}`;
      return jsonResponse(200, { [member]: page.items.map(view), ...(next ? { next } : {}) }, next ? { link: `<${next}>; rel="next"` } : {});
    } catch (error) {
      if (error instanceof InvalidPageCursorError)
        return problemResponse(problems.badRequest('invalid-parameter', 'Invalid Parameter', 'cursor is not one this list handed out.'));
      throw error;
    }
  }
}

/**
 * An attempt as the API shows it. Without an answer from the target, its latency is left out: how
 * long a failure took tells a closed port from a filtered one (review item 19); the operator log
 * keeps it.
 */
function attemptView({ subscriptionId: _s, ...attempt }: AttemptRecord): Record<string, unknown> {
  if (attempt.status !== undefined) return attempt;
  const { latencyMs: _latency, ...withoutLatency } = attempt;
  return withoutLatency;
}

/** A dead letter as the API shows it: the events by their context attributes, never their data. */
function deadLetterView(deadLetter: DeadLetter): Record<string, unknown> {
  return {
    deliveryId: deadLetter.deliveryId,
    createdAt: new Date(deadLetter.createdAt).toISOString(),
    deadLetteredAt: deadLetter.deadLetteredAt,
    reason: deadLetter.reason,
    detail: deadLetter.detail,
    attempts: deadLetter.attempts,
    lastAttempts: deadLetter.lastAttempts.map(attemptView),
    events: deadLetter.events.map((json) => {
      const { id, source, type, attributes } = readStoredEvent(json);
      return { id, source, type, ...(typeof attributes['subject'] === 'string' ? { subject: attributes['subject'] } : {}) };
    }),
    ...(deadLetter.redriveOf ? { redriveOf: deadLetter.redriveOf } : {}),
  };
}

function parseSelection(body: Buffer): { deliveryIds?: ReadonlySet<string> } | { problem: ReturnType<typeof problem> } {
  const invalid = (detail: string) => ({ problem: problems.badRequest('invalid-redrive-selection', 'Invalid Redrive Selection', detail) });
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return invalid('The body must be JSON: {"all": true} or {"deliveryIds": ["…"]}.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return invalid('The body must be an object: {"all": true} or {"deliveryIds": ["…"]}.');
  const { all, deliveryIds, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0)
    return invalid(
      `Unknown member ${Object.keys(rest)
        .map((k) => `"${k}"`)
        .join(', ')}.`,
    );
  if (all === true && deliveryIds === undefined) return {};
  if (
    all === undefined &&
    Array.isArray(deliveryIds) &&
    deliveryIds.length > 0 &&
    deliveryIds.length <= MAX_REDRIVE &&
    deliveryIds.every((d) => typeof d === 'string' && d.length > 0)
  ) {
    return { deliveryIds: new Set(deliveryIds as string[]) };
  }
  return invalid(`Give either "all": true or "deliveryIds": a list of 1 to ${MAX_REDRIVE} delivery ids.`);
}

function notFound(id: string): HttpResponse {
  return problemResponse(problems.notFound(`There is no subscription ${id} for this client.`));
}
