/**
 * Koerier's own CloudEvents (issue 13, item 3): what happens to a subscription — suspended,
 * resumed, retired, a delivery dead-lettered, its dead letters no longer empty, a replay finished
 * — told as events that travel Koerier's own pipeline (inbound queue → router → delivery, push or
 * pull), so operators and subscribers subscribe to them like to any other type.
 *
 * Who receives one (EDU-7, `entitledToEvent` in core/subscriptions/entitlements.ts): the owner of
 * the subscription it is about (named by the `koeriersubscriber` extension), and operators, the
 * partners whose entitlements name this namespace (`{ "typePrefix": "dev.koerier." }`). A grant of
 * every type (`""`) is about partners' data and does not make a partner an operator. Publishers may
 * not publish in this namespace (the ingest answers 403), so no partner can forge one.
 *
 * Types follow the NL GOV profile: reverse DNS of Koerier's own domain (koerier.dev), one version
 * suffix (CE-6). `data` holds identifiers, statuses and reasons only,
 * never an event's data (CE-16).
 */
import { createHash } from 'node:crypto';
import type { Log } from '../ports/log.js';
import { uuidFromHash } from '../ids/stable-uuid.js';

/** Every operational type starts with this; publishers may not use it. */
export const OPERATIONS_TYPE_PREFIX = 'dev.koerier.';

export const operationalEventTypes = {
  /** The delivery function suspended the subscription (its target kept failing, or it lacks an acceptable credential). */
  subscriptionSuspended: 'dev.koerier.subscription.suspended.v1',
  /** A suspended subscription was resumed (`POST /subscriptions/{id}/resume`). */
  subscriptionResumed: 'dev.koerier.subscription.resumed.v1',
  /** The target answered 410 Gone: the subscription is retired for good. */
  subscriptionRetired: 'dev.koerier.subscription.retired.v1',
  /** A delivery was attempted and given up: it is now a dead letter. */
  deliveryDeadLettered: 'dev.koerier.delivery.deadlettered.v1',
  /** The subscription had no dead letters and now has one. */
  deadLettersNotEmpty: 'dev.koerier.deadletters.notempty.v1',
  /** A replay (`POST /subscriptions/{id}/replays`) ended: finished, cancelled or failed. */
  replayFinished: 'dev.koerier.replay.finished.v1',
  /** A version of a contract the subscription's types are bound to was deprecated, with its sunset date. */
  contractDeprecated: 'dev.koerier.contract.deprecated.v1',
} as const;

export type OperationalEventType = (typeof operationalEventTypes)[keyof typeof operationalEventTypes];

/** The extension attribute naming the client whose subscription the event is about. */
export const SUBSCRIBER_ATTRIBUTE = 'koeriersubscriber';

export function isOperationalType(type: string): boolean {
  return type.startsWith(OPERATIONS_TYPE_PREFIX);
}

/** One occurrence to tell. */
export interface OperationalNotice {
  readonly type: OperationalEventType;
  readonly subscription: { readonly id: string; readonly owner: string };
  /**
   * What makes this occurrence one: the event's `id` is derived from the type, the subscription
   * and these, so two instances telling the same occurrence publish the same event and the router
   * drops the second by `source` + `id` (CE-17).
   */
  readonly occurrence: readonly string[];
  /** Epoch ms. */
  readonly time: number;
  /** Identifiers, statuses and reasons; never event data. */
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * The port: puts notices on Koerier's own pipeline. Resolves once they are stored (the adapter
 * writes them to the inbound queue, as the ingest does) and throws otherwise.
 */
export interface OperationalEvents {
  publish(notices: readonly OperationalNotice[]): Promise<void>;
  /**
   * Notices that are not told as events but may still call for an out-of-band alert (a delivery
   * withheld because its owner lost the entitlement, core/alerts); absent where nobody alerts.
   */
  alertOnly?(notices: readonly OperationalNotice[]): Promise<void>;
}

/** The notice as a CloudEvent in the JSON event format, from `source` (the deployment's URL). */
export function operationalEventJson(notice: OperationalNotice, source: string): string {
  const id = uuidFromHash(
    createHash('sha256').update(
      JSON.stringify(['operational', notice.type, notice.subscription.id, ...notice.occurrence]),
    ),
  );
  return JSON.stringify({
    specversion: '1.0',
    id,
    source,
    type: notice.type,
    subject: notice.subscription.id,
    time: new Date(notice.time).toISOString(),
    datacontenttype: 'application/json',
    [SUBSCRIBER_ATTRIBUTE]: notice.subscription.owner,
    data: { subscriptionId: notice.subscription.id, ...notice.data },
  });
}

/**
 * Tells the notices, after the state change they describe has been stored. A failure to tell is
 * logged, not thrown: the change itself stands (undoing a suspension because the news of it could
 * not be queued would be worse), and the caller's own work goes on.
 */
export async function tell(
  operations: OperationalEvents | undefined,
  notices: readonly OperationalNotice[],
  log: Log,
): Promise<void> {
  if (!operations || notices.length === 0) return;
  try {
    await operations.publish(notices);
  } catch (error) {
    log.error('operational events not published', {
      types: notices.map((notice) => notice.type),
      subscriptionIds: notices.map((notice) => notice.subscription.id),
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/** For work/replay: the notice that a replay ended. */
/** One notice per consuming subscription of a deprecated contract version (issue 14 item 3). */
export function contractDeprecatedNotices(deprecation: {
  readonly contract: string;
  readonly version: string;
  readonly sunset: string;
  readonly eventTypes: readonly string[];
  readonly consumers: readonly { readonly subscriptionId: string; readonly owner: string }[];
  readonly at: string;
}): OperationalNotice[] {
  return deprecation.consumers.map(({ subscriptionId, owner }) => ({
    type: operationalEventTypes.contractDeprecated,
    subscription: { id: subscriptionId, owner },
    occurrence: [deprecation.contract, deprecation.version],
    time: Date.parse(deprecation.at),
    data: {
      contract: deprecation.contract,
      version: deprecation.version,
      sunset: deprecation.sunset,
      eventTypes: [...deprecation.eventTypes],
    },
  }));
}

export function replayFinishedNotice(
  subscription: { readonly id: string; readonly owner: string },
  replay: { readonly id: string; readonly state: string; readonly figures?: Readonly<Record<string, number>> },
  time: number,
): OperationalNotice {
  return {
    type: operationalEventTypes.replayFinished,
    subscription,
    occurrence: [replay.id],
    time,
    data: { replayId: replay.id, state: replay.state, ...(replay.figures ?? {}) },
  };
}
