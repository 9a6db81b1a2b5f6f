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
 */
import { randomUUID } from 'node:crypto';
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import { readStoredEvent } from '../cloudevents/index.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { problem, problemResponse, problems } from '../http/problems.js';
import type { Subscription, SubscriptionStatus } from '../subscriptions/subscription.js';
import type { DeliveryMessage } from './delivery-message.js';
import { InvalidPageCursorError, type DeadLetter, type DeliveryStateStore, type Page } from './delivery-records.js';

export interface DeliveryAdminDependencies {
  readonly store: DeliveryStateStore;
  readonly subscriptions: {
    get(id: string): Promise<Subscription | undefined>;
    updateStatus(id: string, status: SubscriptionStatus, reason: string): Promise<unknown>;
  };
  /** Puts new delivery messages on the deliveries queue. */
  enqueue(messages: readonly DeliveryMessage[]): Promise<void>;
  readonly audit: (message: string, fields: Record<string, unknown>) => void;
  readonly clock?: () => number;
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;
/** Dead letters one redrive request sends at most; `more: true` says to call again. */
export const MAX_REDRIVE = 500;

export class DeliveryAdmin {
  private readonly now: () => number;

  constructor(private readonly deps: DeliveryAdminDependencies) {
    this.now = deps.clock ?? Date.now;
  }

  /** GET /subscriptions/{id}/deliveries: recent attempts, newest first. */
  async listAttempts(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    if (!(await this.visible(principal, id))) return notFound(id);
    return this.page(request, `/subscriptions/${id}/deliveries`, (page) => this.deps.store.listAttempts(id, page), 'attempts', ({ subscriptionId: _s, ...attempt }) => attempt);
  }

  /** GET /subscriptions/{id}/dead-letters: oldest delivery first. */
  async listDeadLetters(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    if (!(await this.visible(principal, id))) return notFound(id);
    return this.page(request, `/subscriptions/${id}/dead-letters`, (page) => this.deps.store.listDeadLetters(id, page), 'deadLetters', deadLetterView);
  }

  /** POST /subscriptions/{id}/dead-letters/redrive with `{"all": true}` or `{"deliveryIds": [...]}`. */
  async redrive(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    const subscription = await this.visible(principal, id);
    if (!subscription) return notFound(id);
    const selection = parseSelection(request.body);
    if ('problem' in selection) return problemResponse(selection.problem);
    if (subscription.status !== 'active') {
      const hint = subscription.status === 'suspended' ? ` Resume it first (POST /subscriptions/${id}/resume).` : '';
      return problemResponse(problem(409, 'subscription-not-active', 'Subscription Not Active', `The subscription is ${subscription.status}; nothing can be delivered to it.${hint}`));
    }
    const wanted = selection.deliveryIds;
    const { chosen, more } = await this.collect(id, (deadLetter) => wanted === undefined || wanted.has(deadLetter.deliveryId));
    const redriven = await this.sendAgain(id, chosen);
    this.deps.audit('dead letters redriven', { subscriptionId: id, by: principal.clientId, count: redriven.length });
    const notFoundIds = wanted === undefined ? [] : [...wanted].filter((deliveryId) => !chosen.some((d) => d.deliveryId === deliveryId));
    return jsonResponse(202, { redriven, ...(notFoundIds.length > 0 ? { notFound: notFoundIds } : {}), more });
  }

  /** POST /subscriptions/{id}/resume: a suspended subscription becomes active; what was parked meanwhile goes out again. */
  async resume(principal: Principal, id: string): Promise<HttpResponse> {
    const subscription = await this.visible(principal, id);
    if (!subscription) return notFound(id);
    if (subscription.status !== 'suspended') {
      return problemResponse(problem(409, 'subscription-not-suspended', 'Subscription Not Suspended', `The subscription is ${subscription.status}; only a suspended subscription can be resumed.`));
    }
    await this.deps.store.resetTarget(id);
    await this.deps.subscriptions.updateStatus(id, 'active', `Resumed by ${principal.clientId} at ${new Date(this.now()).toISOString()}.`);
    let redriven = 0;
    for (let more = true; more; ) {
      const batch = await this.collect(id, (deadLetter) => deadLetter.reason === 'subscription-suspended');
      redriven += (await this.sendAgain(id, batch.chosen)).length;
      more = batch.more;
    }
    this.deps.audit('subscription resumed', { subscriptionId: id, by: principal.clientId, redriven });
    return jsonResponse(200, { id, status: 'active', redriven });
  }

  private async visible(principal: Principal, id: string): Promise<Subscription | undefined> {
    const subscription = await this.deps.subscriptions.get(id);
    if (!subscription) return undefined;
    return subscription.owner === principal.clientId || hasScope(principal, scopes.admin) ? subscription : undefined;
  }

  /** Up to MAX_REDRIVE dead letters that `accept`, and whether there may be more. */
  private async collect(id: string, accept: (deadLetter: DeadLetter) => boolean): Promise<{ chosen: DeadLetter[]; more: boolean }> {
    const chosen: DeadLetter[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.deps.store.listDeadLetters(id, { limit: MAX_PAGE_SIZE, ...(cursor ? { cursor } : {}) });
      for (const deadLetter of page.items) {
        if (!accept(deadLetter)) continue;
        if (chosen.length === MAX_REDRIVE) return { chosen, more: true };
        chosen.push(deadLetter);
      }
      cursor = page.cursor;
    } while (cursor);
    return { chosen, more: false };
  }

  /** New deliveries first, then the dead letters go: a failure in between duplicates, never loses. */
  private async sendAgain(id: string, deadLetters: readonly DeadLetter[]): Promise<{ deliveryId: string; newDeliveryId: string }[]> {
    if (deadLetters.length === 0) return [];
    const createdAt = this.now();
    const messages = deadLetters.map(
      (deadLetter): DeliveryMessage => ({ version: 1, deliveryId: randomUUID(), subscriptionId: id, events: deadLetter.events, createdAt, redriveOf: deadLetter.deliveryId }),
    );
    await this.deps.enqueue(messages);
    await this.deps.store.deleteDeadLetters(deadLetters);
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
      if (error instanceof InvalidPageCursorError) return problemResponse(problems.badRequest('invalid-parameter', 'Invalid Parameter', 'cursor is not one this list handed out.'));
      throw error;
    }
  }
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
    lastAttempts: deadLetter.lastAttempts.map(({ subscriptionId: _s, ...attempt }) => attempt),
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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid('The body must be an object: {"all": true} or {"deliveryIds": ["…"]}.');
  const { all, deliveryIds, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return invalid(`Unknown member ${Object.keys(rest).map((k) => `"${k}"`).join(', ')}.`);
  if (all === true && deliveryIds === undefined) return {};
  if (all === undefined && Array.isArray(deliveryIds) && deliveryIds.length > 0 && deliveryIds.length <= MAX_REDRIVE && deliveryIds.every((d) => typeof d === 'string' && d.length > 0)) {
    return { deliveryIds: new Set(deliveryIds as string[]) };
  }
  return invalid(`Give either "all": true or "deliveryIds": a list of 1 to ${MAX_REDRIVE} delivery ids.`);
}

function notFound(id: string): HttpResponse {
  return problemResponse(problems.notFound(`There is no subscription ${id} for this client.`));
}
