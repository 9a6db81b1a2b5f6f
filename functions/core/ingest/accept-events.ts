/**
 * The ingest use case (EDU-IN, EDU-15, EDU-16, EDU-19): a publisher's authenticated POST /events,
 * from the Idempotency-Key guard to the 202. In order: the guard (EDU-IDEM-1…18), the publisher's
 * rate window (WH-7, EDU-20), parsing and validation with the batch cap, the source grants
 * (EDU-IN), the inbound queue (persist before acknowledge, EDU-19), and the answer.
 * Authentication and the per-container throttle happen before, in the app (functions/app).
 */
import type { PublishGrants } from '../auth/publish-grants.js';
import { ungrantedSources } from '../auth/publish-grants.js';
import type { Principal } from '../auth/access-tokens.js';
import { parseCloudEventsRequest, type ParsedEvents } from '../cloudevents/index.js';
import { acceptedAnswer } from '../http/accepted-answer.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { KoerierError, problem } from '../http/problems.js';
import { withIdempotency } from '../idempotency/index.js';
import type { IdempotencyStore } from '../idempotency/store.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { describeError } from '../errors/describe-error.js';
import { groupedWarnings } from './grouped-warnings.js';
import type { InboundQueue, RateWindow } from './ports.js';

/** The route, as the idempotency guard scopes keys by it. */
export const INGEST_OPERATION = 'POST /events';

/** The most events one batch may hold. */
export const MAX_EVENTS_PER_BATCH = 1000;

/** Message attributes that travel with every accepted event to the router. */
export const inboundMessageAttributes = {
  publisher: 'koerier-publisher',
  receivedAt: 'koerier-received-at',
} as const;

export interface IngestSettings {
  readonly publishRatePerMinute: number;
  /** Largest event (serialised) the ingest stores in a queue message. */
  readonly maxEventBytes: number;
  readonly publishGrants: PublishGrants;
  readonly idempotency: { readonly ttlSeconds: number; readonly lockSeconds: number };
}

export interface IngestDependencies {
  readonly idempotency: IdempotencyStore;
  readonly rateWindow: RateWindow;
  readonly inbound: InboundQueue;
  readonly settings: IngestSettings;
  readonly log: Log;
  /** The receipt time of accepted events, and the idempotency guard's clock. */
  readonly clock?: Clock;
}

/** Runs one publish request of `principal` through the guard and, on a first attempt, accepts its events. */
export function acceptEvents(request: HttpRequest, principal: Principal, deps: IngestDependencies): Promise<HttpResponse> {
  const publisher = principal.clientId;
  return withIdempotency(
    request,
    {
      clientId: publisher,
      operation: INGEST_OPERATION,
      store: deps.idempotency,
      clock: deps.clock,
      ttlSeconds: deps.settings.idempotency.ttlSeconds,
      lockSeconds: deps.settings.idempotency.lockSeconds,
      // The events are stored and the 202 goes out; only a replay of it is lost, so warn, don't fail.
      onStoreError: (error) => deps.log.warn('idempotency completion not stored', { client: publisher, error: describeError(error) }),
    },
    () => storeEvents(request, publisher, deps),
  );
}

async function storeEvents(request: HttpRequest, publisher: string, deps: IngestDependencies): Promise<HttpResponse> {
  const { settings, log } = deps;
  // Inside the idempotency guard, so only first attempts count; a 429 frees the key for the retry.
  const rate = await deps.rateWindow.take(publisher, settings.publishRatePerMinute);
  if (!rate.allowed) {
    throw new KoerierError(problem(429, 'rate-limited', 'Too Many Requests', `At most ${settings.publishRatePerMinute} requests per minute per publisher.`), {
      headers: { 'retry-after': String(rate.retryAfterSeconds) },
    });
  }
  let outcome: ParsedEvents;
  try {
    outcome = parseCloudEventsRequest(request, { maxEventBytes: settings.maxEventBytes, maxEventsPerBatch: MAX_EVENTS_PER_BATCH });
  } catch (error) {
    if (error instanceof KoerierError) {
      const refused = error.problem;
      log.info('events rejected', { publisher, status: refused.status, type: refused.type, errors: refused.errors?.length ?? 0 });
    }
    throw error;
  }
  const ungranted = ungrantedSources(
    publisher,
    outcome.events.map((event) => event.source),
    settings.publishGrants,
    outcome.mode === 'batch',
  );
  if (ungranted.length > 0) {
    log.info('events refused', { publisher, reason: 'source not granted', events: ungranted.length });
    throw new KoerierError(problem(403, 'source-not-granted', 'Forbidden', 'This client may not publish events with these sources.', { errors: ungranted }));
  }
  const receivedAt = new Date(deps.clock?.() ?? Date.now()).toISOString();
  // EDU-19, EDU-IN: the 202 below is only reached once the queue has stored every event. A failed
  // write is a 503 (the idempotency guard frees the key for it), so the publisher retries the request.
  try {
    await deps.inbound.send(
      outcome.events.map((event) => ({
        body: event.json,
        attributes: { [inboundMessageAttributes.publisher]: publisher, [inboundMessageAttributes.receivedAt]: receivedAt },
      })),
    );
  } catch (error) {
    log.error('events not stored', { publisher, mode: outcome.mode, events: outcome.events.length, error: describeError(error) });
    throw new KoerierError(
      problem(
        503,
        'events-not-stored',
        'Service Unavailable',
        'The events could not be stored, so none is acknowledged. Retry the request with the same Idempotency-Key; events that were stored are recognised by source and id and delivered once.',
      ),
      { headers: { 'retry-after': '1' }, cause: error },
    );
  }
  // Context attributes may be logged (CE-16); the data never is.
  for (const event of outcome.events) log.info('event accepted', { publisher, mode: outcome.mode, id: event.id, source: event.source, type: event.type });
  // Bounded (review #11): the idempotency store keeps this body for replays in one item.
  return jsonResponse(202, acceptedAnswer(outcome.events, groupedWarnings(outcome.warnings)));
}
