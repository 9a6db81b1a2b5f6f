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
import { withPreparedIdempotency, type PreparedRequest } from '../idempotency/index.js';
import { readIdempotencyKey } from '../idempotency/key.js';
import type { IdempotencyStore } from '../idempotency/store.js';
import type { Clock } from '../ports/clock.js';
import { withFields, type Log } from '../ports/log.js';
import { noMetrics, type Metrics } from '../ports/metrics.js';
import { correlationIdOf } from '../ids/correlation-id.js';
import { describeError } from '../errors/describe-error.js';
import { offloadEvents, planOffload, type OffloadDependencies } from '../claim-check/offload.js';
import { resolveUploads } from '../claim-check/uploads.js';
import type { DataContracts } from '../contracts/data-contracts.js';
import { checkedAgainstContracts, reservedTypeIssues } from './event-policies.js';
import { groupedWarnings } from './grouped-warnings.js';
import type { InboundQueue, RateWindow } from './ports.js';
import { routedEventKey } from '../routing/routed-events.js';
import type { RoutedEventReader } from '../trace/routed-event-records.js';
import { nextAcceptancePosition } from '../ordering/acceptance-position.js';
import { refuseEventsWithoutOrderingKey, type OrderingKeyCheck } from './ordering-key-check.js';

/** The route, as the idempotency guard scopes keys by it. */
export const INGEST_OPERATION = 'POST /events';

/** The most events one batch may hold. */
export const MAX_EVENTS_PER_BATCH = 1000;

/** Message attributes that travel with every accepted event to the router. */
export const inboundMessageAttributes = {
  publisher: 'koerier-publisher',
  receivedAt: 'koerier-received-at',
  /** The ingest request's correlation id (core/ids/correlation-id.ts), carried on to the router and the deliveries. */
  correlationId: 'koerier-correlation-id',
  /** The publish request's Idempotency-Key (a UUID): the router keeps it on the event's marker for the trace (issue 30 item 1). */
  idempotencyKey: 'koerier-idempotency-key',
  /** The event's place in acceptance order (core/ordering/acceptance-position.ts): what ordered lanes append by (issue 33). */
  acceptedPosition: 'koerier-accepted-position',
} as const;

export interface IngestSettings {
  readonly publishRatePerMinute: number;
  /** Largest event (JSON format text) accepted; 413 above it. */
  readonly maxEventBytes: number;
  /** Events above this travel by reference (EDU-1): their data goes to the claim check. */
  readonly inlineEventBytes: number;
  /** The largest event a queue message carries. */
  readonly maxQueuedEventBytes: number;
  readonly publishGrants: PublishGrants;
  readonly idempotency: { readonly ttlSeconds: number; readonly lockSeconds: number };
}

export interface IngestDependencies {
  readonly idempotency: IdempotencyStore;
  readonly rateWindow: RateWindow;
  readonly inbound: InboundQueue;
  /** Where data too large to travel inline goes (EDU-1, CARD-6). */
  readonly claimCheck: Pick<OffloadDependencies, 'store' | 'ledger'> & {
    readonly publicBaseUrl: string;
    readonly retentionSeconds: number;
  };
  readonly settings: IngestSettings;
  readonly log: Log;
  /** Issue 14 item 3: event types bound to a contract message have their `data` checked (`warn`, `enforce`). */
  readonly dataContracts?: Pick<DataContracts, 'check'>;
  /** Events accepted, and requests refused by rule. */
  readonly metrics?: Metrics;
  /** The receipt time of accepted events, and the idempotency guard's clock. */
  readonly clock?: Clock;
  /**
   * Which events were accepted before (issue 30 item 1): their entries in the 202 say `duplicate`.
   * One batched read per hundred events of a request; absent: no event is marked.
   */
  readonly acceptedEvents?: Pick<RoutedEventReader, 'acceptedAmong'>;
  /** Issue 33, ORD-1: ordered subscriptions that refuse events without their key; absent: nothing is refused for it. */
  readonly orderingKeys?: OrderingKeyCheck;
}

/**
 * Runs one publish request of `principal` through the guard and, on a first attempt, accepts its
 * events. The request is parsed and validated before the claim, so the claim can hold the 202 and
 * the queue write completes it without a second write (core/idempotency/prepared-guard.ts); a
 * refusal goes through the plain guard and is stored as before.
 */
export function acceptEvents(
  request: HttpRequest,
  principal: Principal,
  deps: IngestDependencies,
): Promise<HttpResponse> {
  const publisher = principal.clientId;
  const correlationId = correlationIdOf(request);
  // Every line of this request names it, so the router's and the deliveries' lines can be found from here.
  const publish: PublishRequest = {
    request,
    publisher,
    correlationId,
    log: withFields(deps.log, { correlationId }),
    metrics: deps.metrics ?? noMetrics,
  };
  let refusalLog = () => {};
  return withPreparedIdempotency(
    request,
    {
      clientId: publisher,
      operation: INGEST_OPERATION,
      store: deps.idempotency,
      clock: deps.clock,
      ttlSeconds: deps.settings.idempotency.ttlSeconds,
      lockSeconds: deps.settings.idempotency.lockSeconds,
      // The events are stored and the 202 goes out; only a replay of it is lost, so warn, don't fail.
      onStoreError: (error) =>
        deps.log.warn('idempotency completion not stored', { client: publisher, error: describeError(error) }),
    },
    () => prepareEvents(publish, deps, (log) => (refusalLog = log)),
    async (refusal) => {
      // Only first attempts count, and a request over the rate is told so before it is told what is wrong with it.
      await takeRateSlot(publish, deps);
      refusalLog();
      throw refusal;
    },
  );
}

/** One publish request as the steps below see it. */
interface PublishRequest {
  readonly request: HttpRequest;
  readonly publisher: string;
  readonly correlationId: string;
  /** Names the correlation id on every line. */
  readonly log: Log;
  readonly metrics: Metrics;
}

/** Counts the request in the publisher's window, or throws the 429 (which frees the key for the retry). */
async function takeRateSlot({ publisher, metrics }: PublishRequest, deps: IngestDependencies): Promise<void> {
  const { publishRatePerMinute } = deps.settings;
  const rate = await deps.rateWindow.take(publisher, publishRatePerMinute);
  if (!rate.allowed) {
    metrics.publishRejected('rate-limited');
    throw new KoerierError(
      problem(429, 'rate-limited', `At most ${publishRatePerMinute} requests per minute per publisher.`),
      {
        headers: { 'retry-after': String(rate.retryAfterSeconds) },
      },
    );
  }
}

/** Everything about the request that needs no I/O: parsing, validation, grants, the offload plan and the 202. Throws the refusals. */
async function prepareEvents(
  publish: PublishRequest,
  deps: IngestDependencies,
  onRefusal: (log: () => void) => void,
): Promise<PreparedRequest> {
  const { request, publisher, log, metrics } = publish;
  const { settings } = deps;
  let outcome: ParsedEvents;
  try {
    outcome = parseCloudEventsRequest(request, {
      maxEventBytes: settings.maxEventBytes,
      maxEventsPerBatch: MAX_EVENTS_PER_BATCH,
    });
  } catch (error) {
    if (error instanceof KoerierError) {
      const refused = error.problem;
      onRefusal(() => {
        log.info('events rejected', {
          publisher,
          status: refused.status,
          type: refused.type,
          errors: refused.errors?.length ?? 0,
        });
        metrics.publishRejected(ruleOf(refused.type));
      });
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
    onRefusal(() => {
      log.info('events refused', { publisher, reason: 'source not granted', events: ungranted.length });
      metrics.publishRejected('source-not-granted');
    });
    throw new KoerierError(
      problem(403, 'source-not-granted', 'This client may not publish events with these sources.', {
        errors: ungranted,
      }),
    );
  }
  const reserved = reservedTypeIssues(outcome);
  if (reserved.length > 0) {
    onRefusal(() => {
      log.info('events refused', { publisher, reason: 'type reserved', events: reserved.length });
      metrics.publishRejected('type-reserved');
    });
    throw new KoerierError(
      problem(403, 'type-reserved', "No client may publish events in Koerier's own operational namespace.", {
        errors: reserved,
      }),
    );
  }
  await refuseEventsWithoutOrderingKey(outcome, deps.orderingKeys, (events) =>
    onRefusal(() => {
      log.info('events refused', { publisher, reason: 'ordering key missing', events });
      metrics.publishRejected('ordering-key-missing');
    }),
  );
  const contractWarnings = await checkedAgainstContracts(outcome, publisher, deps.dataContracts, (events, violations) =>
    onRefusal(() => {
      log.info('events rejected', { publisher, reason: 'data contract', events, violations });
      metrics.publishRejected('data-contract-violation');
    }),
  );
  let offload: number[];
  try {
    offload = planOffload(outcome.events, settings);
  } catch (error) {
    if (error instanceof KoerierError) onRefusal(() => logRefusal(error, publisher, log, metrics));
    throw error;
  }
  const acceptedBefore = await acceptedBeforeAmong(outcome.events, deps, log);
  // Bounded (review #11): the idempotency store keeps this body for replays in one item.
  const answer = jsonResponse(
    202,
    acceptedAnswer(outcome.events, groupedWarnings([...outcome.warnings, ...contractWarnings]), (event) =>
      acceptedBefore.has(routedEventKey(event)),
    ),
  );
  return {
    answer,
    commit: async (takeover) => {
      // A takeover repeats an attempt that already counted against the rate.
      if (!takeover) await takeRateSlot(publish, deps);
      await storeEvents(outcome, offload, publish, deps);
      return answer;
    },
  };
}

/**
 * The events whose source + id the router has seen within the window (issue 30 item 1), read before
 * the claim so the stored 202 holds the answer. Best effort, and never a refusal: a copy published
 * before the router saw the first is answered `accepted` and still dropped there (EDU-IDEM-15), and
 * a failed read marks nothing. It runs in `prepare`, before the guard knows whether the request is a
 * replay, so a replay pays the read too and still gets the stored answer.
 */
async function acceptedBeforeAmong(
  events: readonly { readonly source: string; readonly id: string }[],
  deps: IngestDependencies,
  log: Log,
): Promise<ReadonlySet<string>> {
  if (deps.acceptedEvents === undefined) return new Set();
  try {
    return await deps.acceptedEvents.acceptedAmong(events, deps.clock?.() ?? Date.now());
  } catch (error) {
    log.warn('earlier acceptances not read', { events: events.length, error: describeError(error) });
    return new Set();
  }
}

async function storeEvents(
  outcome: ParsedEvents,
  offload: readonly number[],
  publish: PublishRequest,
  deps: IngestDependencies,
): Promise<void> {
  const { publisher, correlationId, log, metrics } = publish;
  const { settings } = deps;
  const now = deps.clock?.() ?? Date.now();
  const receivedAt = new Date(now).toISOString();
  // EDU-19, EDU-IN: the 202 is only given once the claim check and the queue have stored every
  // event. A failed write is a 503 (the idempotency guard frees the key for it), so the publisher
  // retries the request.
  try {
    const { claimCheck } = deps;
    const uploaded = await resolveUploads(outcome.events, publisher, { ...claimCheck, now: () => now });
    const queued =
      offload.length === 0
        ? uploaded
        : await offloadEvents(uploaded, offload, publisher, now, {
            store: claimCheck.store,
            ledger: claimCheck.ledger,
            settings: {
              ...settings,
              publicBaseUrl: claimCheck.publicBaseUrl,
              retentionSeconds: claimCheck.retentionSeconds,
            },
          });
    await deps.inbound.send(
      queued.map((event) => ({
        body: event.json,
        attributes: {
          [inboundMessageAttributes.publisher]: publisher,
          [inboundMessageAttributes.receivedAt]: receivedAt,
          [inboundMessageAttributes.correlationId]: correlationId,
          [inboundMessageAttributes.idempotencyKey]: readIdempotencyKey(publish.request.headers),
          // Taken in the events' order in the request, after everything else is checked (issue 33).
          [inboundMessageAttributes.acceptedPosition]: String(nextAcceptancePosition()),
        },
      })),
    );
  } catch (error) {
    // A refused upload reference is the publisher's to fix, not an outage.
    if (error instanceof KoerierError) {
      logRefusal(error, publisher, log, metrics);
      throw error;
    }
    log.error('events not stored', {
      publisher,
      mode: outcome.mode,
      events: outcome.events.length,
      error: describeError(error),
    });
    throw new KoerierError(
      problem(
        503,
        'events-not-stored',
        'The events could not be stored, so none is acknowledged. Retry the request with the same Idempotency-Key; events that were stored are recognised by source and id and delivered once.',
      ),
      { headers: { 'retry-after': '1' }, cause: error },
    );
  }
  // Context attributes may be logged (CE-16); the data never is.
  const byReference = new Set(offload);
  for (const [index, event] of outcome.events.entries()) {
    log.info('event accepted', {
      publisher,
      mode: outcome.mode,
      id: event.id,
      source: event.source,
      type: event.type,
      ...(byReference.has(index) ? { claimCheck: true } : {}),
    });
  }
  metrics.eventsAccepted(outcome.events.length);
}

/** A refusal's log line (never the data, CE-16) and its count under the problem's rule. */
function logRefusal(error: KoerierError, publisher: string, log: Log, metrics: Metrics): void {
  log.info('events rejected', { publisher, status: error.problem.status, type: error.problem.type });
  metrics.publishRejected(ruleOf(error.problem.type));
}

/** The rule a refusal names: its problem type's slug (`/v1/problems/<slug>`), a fixed vocabulary. */
function ruleOf(type: string | undefined): string {
  return type?.split('/').at(-1) || 'refused';
}
