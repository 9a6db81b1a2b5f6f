/**
 * The replay API (issue 13, item 2; EDU-18; docs/REPLAY.md), on a subscription the caller owns
 * (`subscriptions:manage`) or any subscription (`admin`):
 *
 *   POST /subscriptions/{id}/replays                 start: 202 + Location, at most one running
 *   GET  /subscriptions/{id}/replays                 the replays kept, newest first
 *   GET  /subscriptions/{id}/replays/{rid}           progress: scanned, matched, sent, failed, state
 *   POST /subscriptions/{id}/replays/{rid}/cancel    stop at the next chunk
 *
 * The work itself runs in the background, a chunk per message on the replays queue
 * (replay-worker.ts); starting only stores the record and queues its first chunk.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { checkEntitlement, type Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { ReplayRunningError, type ReplayQueue, type ReplayRecord, type ReplayStore } from './ports.js';
import { holdReplay, releaseReplay, type ReplayQuota } from './replay-quota.js';
import {
  beyondEntitlement,
  notActive,
  notRunning,
  parseReplayRequest,
  replayLocation,
  replayNotFound,
  replayRunning,
  replayView,
  subscriptionNotFound,
  type ReplayRequest,
} from './replay-requests.js';

/** How long a running replay holds its subscription's slot without progress before another may start. */
export const REPLAY_LEASE_MS = 15 * 60_000;
/** Replays one listing shows at most, newest first. */
export const MAX_LISTED = 100;

export interface ReplayServiceDependencies {
  readonly subscriptions: { get(id: string): Promise<Subscription | undefined> };
  readonly store: ReplayStore;
  readonly queue: ReplayQueue;
  /** The owners' entitlements as configured now (EDU-7). */
  readonly entitlements: Entitlements;
  readonly clock: Clock;
  readonly log: Log;
  readonly newId?: () => string;
  /** Replays running at once per owner (issue 28 item 13); without it they are not counted. */
  readonly quota?: ReplayQuota;
}

export class ReplayService {
  constructor(private readonly deps: ReplayServiceDependencies) {}

  /** Throws the 400 (body), 404 (subscription), 409 (not active, one running, the owner's quota full) or 403 (beyond the entitlement). */
  async start(principal: Principal, id: string, request: HttpRequest): Promise<HttpResponse> {
    const subscription = await this.visible(principal, id);
    const asked = parseReplayRequest(request.body);
    if (subscription.status !== 'active') throw notActive(id, subscription.status);
    this.checkNarrowing(subscription, asked);
    const now = this.deps.clock();
    const record: ReplayRecord = {
      subscriptionId: id,
      replayId: (this.deps.newId ?? randomUUID)(),
      state: 'running',
      from: asked.from,
      // Nothing accepted after the request can be in the window: the archive has no future.
      to: Math.min(asked.to, now),
      ...(asked.types ? { types: asked.types } : {}),
      ...(asked.filters ? { filters: asked.filters } : {}),
      requestedBy: principal.clientId,
      createdAt: now,
      updatedAt: now,
      scanned: 0,
      matched: 0,
      sent: 0,
      failed: 0,
      version: 1,
    };
    const { quota } = this.deps;
    if (quota) await holdReplay(quota, this.deps.store, subscription.owner, record, REPLAY_LEASE_MS);
    // A replay that does not start gives its place back at once (else its missing record frees it within a minute).
    const unhold = () => (quota ? releaseReplay(quota, subscription.owner, record).catch(() => undefined) : undefined);
    try {
      await this.deps.store.start(record, now + REPLAY_LEASE_MS);
    } catch (error) {
      await unhold();
      if (error instanceof ReplayRunningError) throw replayRunning(id, error.runningReplayId);
      throw error;
    }
    try {
      await this.deps.queue.continueLater({ subscriptionId: id, replayId: record.replayId }, 0);
    } catch (error) {
      // Not started after all: free the slot so the retry (a 5xx frees the Idempotency-Key too) can take it.
      await this.deps.store
        .update({ ...record, state: 'failed', reason: 'not queued', finishedAt: now, version: 2 }, 1, now)
        .catch(() => undefined);
      await this.deps.store.release(id, record.replayId).catch(() => undefined);
      await unhold();
      throw error;
    }
    this.deps.log.info('replay started', {
      subscriptionId: id,
      replayId: record.replayId,
      by: principal.clientId,
      from: record.from,
      to: record.to,
    });
    const location = replayLocation(id, record.replayId);
    return jsonResponse(202, replayView(record), { location });
  }

  /** Throws the 404 for a subscription or replay the caller cannot see. */
  async get(principal: Principal, id: string, replayId: string): Promise<HttpResponse> {
    await this.visible(principal, id);
    const record = await this.deps.store.get(id, replayId);
    if (!record) throw replayNotFound(id, replayId);
    return jsonResponse(200, replayView(record), { 'cache-control': 'no-store' });
  }

  /** The subscription's replays kept (30 days), newest first, at most `MAX_LISTED`. Throws the 404. */
  async list(principal: Principal, id: string): Promise<HttpResponse> {
    await this.visible(principal, id);
    const records = (await this.deps.store.list(id)).sort((a, b) => b.createdAt - a.createdAt).slice(0, MAX_LISTED);
    return jsonResponse(200, { replays: records.map(replayView) }, { 'cache-control': 'no-store' });
  }

  /**
   * Marks the replay cancelled and frees the slot; the worker stops before its next chunk (a chunk
   * already being queued completes). Throws the 404, or the 409 for a replay that is over.
   */
  async cancel(principal: Principal, id: string, replayId: string): Promise<HttpResponse> {
    await this.visible(principal, id);
    for (;;) {
      const record = await this.deps.store.get(id, replayId);
      if (!record) throw replayNotFound(id, replayId);
      if (record.state !== 'running') throw notRunning(replayId, record.state);
      const now = this.deps.clock();
      const cancelled: ReplayRecord = {
        ...record,
        state: 'cancelled',
        updatedAt: now,
        finishedAt: now,
        version: record.version + 1,
      };
      // A chunk finishing at the same moment moves the version on: read again and retry.
      if (await this.deps.store.update(cancelled, record.version, now)) {
        await this.deps.store.release(id, replayId);
        this.deps.log.info('replay cancelled', { subscriptionId: id, replayId, by: principal.clientId });
        return jsonResponse(200, replayView(cancelled));
      }
    }
  }

  /** The subscription if the caller owns it or is an admin; else the 404 (never a hint that it exists). */
  private async visible(principal: Principal, id: string): Promise<Subscription> {
    const subscription = await this.deps.subscriptions.get(id);
    if (!subscription || (subscription.owner !== principal.clientId && !hasScope(principal, scopes.admin)))
      throw subscriptionNotFound(id);
    return subscription;
  }

  /**
   * A replay may only narrow: each type it names must be one the subscription takes and one its
   * owner is entitled to (EDU-7), whoever asks (an admin too). Every event is checked again while
   * the replay runs, so a grant revoked meanwhile still stops it.
   */
  private checkNarrowing(subscription: Subscription, asked: ReplayRequest): void {
    for (const type of asked.types ?? []) {
      const decision = checkEntitlement(
        subscription.owner,
        { ...(subscription.source ? { source: subscription.source } : {}), types: [type] },
        this.deps.entitlements,
      );
      if (!decision.entitled) throw beyondEntitlement(type, 'not-entitled');
      if (subscription.types && subscription.types.length > 0 && !subscription.types.includes(type))
        throw beyondEntitlement(type, 'not-subscribed');
    }
  }
}
