/**
 * The erasure API (issue 31 item 4; docs/PRIVACY.md, "Erasure"), scope `admin` only:
 *
 *   POST /erasures        start: 202 + Location; the audit record is stored before the work is queued
 *   GET  /erasures        the audit records, newest first
 *   GET  /erasures/{id}   one: what was removed where, what could not be reached
 *
 * The work runs in the background, a chunk per message on the erasures queue (erasure-worker.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/access-tokens.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { auditKeyFrom, selectorDigest } from './erasure-audit.js';
import { erasureLocation, erasureNotFound, erasureView, parseErasureRequest } from './erasure-request.js';
import { NO_ERASED, type ErasureQueue, type ErasureRecord, type ErasureStore } from './ports.js';

/** Audit records one listing shows at most. */
export const MAX_LISTED = 100;

export interface ErasureServiceDependencies {
  readonly store: ErasureStore;
  readonly queue: ErasureQueue;
  /** The deployment's 32-byte secret the audit key is derived from. */
  readonly secret: () => Promise<Buffer>;
  readonly clock: Clock;
  readonly log: Log;
  readonly newId?: () => string;
}

export class ErasureService {
  constructor(private readonly deps: ErasureServiceDependencies) {}

  /** Throws the 400 of the body. */
  async start(principal: Principal, request: HttpRequest): Promise<HttpResponse> {
    const selector = parseErasureRequest(request.body);
    const now = this.deps.clock();
    const record: ErasureRecord = {
      id: (this.deps.newId ?? randomUUID)(),
      state: 'running',
      selectorKind: selector.kind,
      selectorDigest: selectorDigest(selector, auditKeyFrom(await this.deps.secret())),
      requestedBy: principal.clientId,
      createdAt: now,
      updatedAt: now,
      erased: NO_ERASED,
      notReached: [],
    };
    await this.deps.store.put(record);
    await this.deps.queue.send({ erasureId: record.id, selector, phase: 'archive' });
    // The audit line: who and which record, never the selector.
    this.deps.log.info('erasure started', {
      erasureId: record.id,
      requestedBy: record.requestedBy,
      kind: selector.kind,
    });
    return jsonResponse(202, erasureView(record), { location: erasureLocation(record.id) });
  }

  async list(): Promise<HttpResponse> {
    const records = await this.deps.store.list(MAX_LISTED);
    return jsonResponse(200, { erasures: records.map(erasureView) });
  }

  /** Throws the 404. */
  async get(id: string): Promise<HttpResponse> {
    const record = await this.deps.store.get(id);
    if (record === undefined) throw erasureNotFound(id);
    return jsonResponse(200, erasureView(record));
  }
}
