/**
 * Entitlement (EDU-7): only receivers authorised for the data may subscribe to it. The
 * configuration (`KOERIER_ENTITLEMENTS`) grants each client event types by prefix, optionally
 * only from one source:
 *
 *   { "<client id>": [ { "typePrefix": "nl.edu.leerling.", "source": "urn:nld:oin:…" }, … ] }
 *
 * `typePrefix: ""` grants every type; a grant without `source` covers every source. A client
 * without grants may subscribe to nothing. A prefix covers whole dot-separated segments only
 * (auth/segment-prefix.ts, the rule of publish grants): `nl.edu.rooster` covers `nl.edu.rooster`
 * and `nl.edu.rooster.gewijzigd.v1`, never `nl.edu.roosterx.…` (issue 28 item 14c).
 *
 * A subscription is entitled when everything it can possibly match is granted. That is decided on
 * its conditions, not on events: its types are bounded by `types`, or by `exact`/`prefix` filters
 * on `type` in its conjunction (an `any` bounds them only if each branch does); its source by
 * `source` or an `exact` filter on `source`. A subscription whose types are unbounded (e.g. only
 * `suffix` or `not` filters) needs a grant of every type.
 */
import { isOperationalType, OPERATIONS_TYPE_PREFIX, SUBSCRIBER_ATTRIBUTE } from '../operations/operational-events.js';
import { segmentPrefixCovers, segmentPrefixCoversPrefix } from '../auth/segment-prefix.js';
import { pinsOf, type AttributePin } from '../cesql/index.js';
import type { Filter } from './filters.js';
import { compiledSqlFilter } from './sql-filter.js';
import type { Subscription } from './subscription.js';

export interface Grant {
  readonly typePrefix: string;
  /** Only events from exactly this source. */
  readonly source?: string;
}

export type Entitlements = ReadonlyMap<string, readonly Grant[]>;

/** Event types are reverse-DNS names: their segments are split by dots. */
const TYPE_SEPARATOR = '.';

/** A bound on the event types: either one exact type or every type with a prefix. */
interface TypePattern {
  readonly value: string;
  readonly exact: boolean;
}

export class EntitlementConfigError extends Error {
  override name = 'EntitlementConfigError';
}

export function parseEntitlements(json: string): Entitlements {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw new EntitlementConfigError(`entitlements are not JSON: ${(error as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new EntitlementConfigError('entitlements must be an object of client id → grants');
  const entitlements = new Map<string, Grant[]>();
  for (const [clientId, grants] of Object.entries(raw)) {
    if (!Array.isArray(grants)) throw new EntitlementConfigError(`the grants of "${clientId}" must be a list`);
    entitlements.set(
      clientId,
      grants.map((grant: unknown) => {
        const g = grant as Record<string, unknown>;
        if (typeof grant !== 'object' || grant === null || typeof g['typePrefix'] !== 'string') {
          throw new EntitlementConfigError(`each grant of "${clientId}" needs a "typePrefix" string`);
        }
        if (g['source'] !== undefined && (typeof g['source'] !== 'string' || g['source'] === '')) {
          throw new EntitlementConfigError(`"source" in a grant of "${clientId}" must be a non-empty string`);
        }
        return { typePrefix: g['typePrefix'], ...(typeof g['source'] === 'string' ? { source: g['source'] } : {}) };
      }),
    );
  }
  return entitlements;
}

export type EntitlementDecision = { readonly entitled: true } | { readonly entitled: false; readonly reason: string };

export function checkEntitlement(
  clientId: string,
  subscription: Pick<Subscription, 'source' | 'types' | 'filters'>,
  entitlements: Entitlements,
): EntitlementDecision {
  const grants = entitlements.get(clientId) ?? [];
  const source = boundSource(subscription);
  const bounds = typeBounds(subscription);
  // Any one bound of the conjunction suffices: the subscription matches no more than it allows.
  const candidates = bounds.length > 0 ? bounds : [[{ value: '', exact: false }]];
  for (const bound of candidates) {
    // Koerier's operational events: every client may subscribe, and receives those about its own subscriptions.
    if (
      bound.every(
        (pattern) => isOperationalType(pattern.value) || grants.some((grant) => covers(grant, pattern, source)),
      )
    )
      return { entitled: true };
  }
  if (grants.length === 0)
    return { entitled: false, reason: `client "${clientId}" is not entitled to subscribe to any events` };
  const asked = candidates[0]!.map((p) => (p.exact ? p.value : `${p.value}*`)).join(', ');
  return {
    entitled: false,
    reason: `client "${clientId}" is not entitled to events of type ${asked}${source === undefined ? ' from every source' : ` from source ${source}`}`,
  };
}

/**
 * Whether the client's grants cover this one event. The router checks it for every match, so
 * revoking a grant stops deliveries at once, without waiting for anyone to change the
 * subscriptions it made (they stay, and resume if the grant comes back).
 */
export function entitledToEvent(clientId: string, event: EntitlementSubject, entitlements: Entitlements): boolean {
  const grants = entitlements.get(clientId) ?? [];
  if (isOperationalType(event.type)) {
    // About the client's own subscription, or the client is an operator: a grant that names the
    // operational namespace itself (a grant of every type, "", is about partners' data).
    return (
      event.attributes?.[SUBSCRIBER_ATTRIBUTE] === clientId ||
      grants.some((grant) => grant.typePrefix.startsWith(OPERATIONS_TYPE_PREFIX) && typeCovered(grant, event.type))
    );
  }
  return grants.some(
    (grant) => typeCovered(grant, event.type) && (grant.source === undefined || grant.source === event.source),
  );
}

/** What the per-event entitlement reads of an event: its type and source, and its extensions for Koerier's own events. */
export interface EntitlementSubject {
  readonly type: string;
  readonly source: string;
  readonly attributes?: Readonly<Record<string, unknown>>;
}

function covers(grant: Grant, pattern: TypePattern, source: string | undefined): boolean {
  const typeCovers = pattern.exact
    ? typeCovered(grant, pattern.value)
    : segmentPrefixCoversPrefix(grant.typePrefix, pattern.value, TYPE_SEPARATOR);
  return typeCovers && (grant.source === undefined || grant.source === source);
}

/** Issue 28 item 14c: by whole segments, as publish grants cover sources, so `nl.example.case` is not `nl.example.caseworker`. */
function typeCovered(grant: Grant, type: string): boolean {
  return segmentPrefixCovers(grant.typePrefix, type, TYPE_SEPARATOR);
}

/** Every alternative set of type patterns that bounds the subscription's types. */
function typeBounds(subscription: Pick<Subscription, 'types' | 'filters'>): TypePattern[][] {
  const bounds: TypePattern[][] = [];
  if (subscription.types && subscription.types.length > 0)
    bounds.push(subscription.types.map((value) => ({ value, exact: true })));
  for (const filter of subscription.filters ?? []) bounds.push(...filterTypeBounds(filter));
  return bounds;
}

function filterTypeBounds(filter: Filter): TypePattern[][] {
  if ('exact' in filter)
    return filter.exact['type'] === undefined ? [] : [[{ value: filter.exact['type'], exact: true }]];
  if ('prefix' in filter)
    return filter.prefix['type'] === undefined ? [] : [[{ value: filter.prefix['type'], exact: false }]];
  if ('all' in filter) return filter.all.flatMap(filterTypeBounds);
  if ('sql' in filter) return sqlTypeBounds(filter.sql);
  if ('any' in filter) {
    const branches = filter.any.map(filterTypeBounds);
    if (branches.some((bounds) => bounds.length === 0)) return [];
    return [branches.flatMap((bounds) => bounds[0]!)];
  }
  return [];
}

/** Issue 32: the `type` conditions a CESQL expression pins bound it as `exact` and `prefix` filters do. */
function sqlTypeBounds(text: string): TypePattern[][] {
  return sqlPins(text)
    .filter((pins) => pins.every((pin) => pin.attribute === 'type'))
    .map((pins) => pins.map((pin) => ({ value: pin.value, exact: pin.kind === 'eq' })));
}

function sqlPins(text: string): AttributePin[][] {
  const compiled = compiledSqlFilter(text);
  return compiled === undefined ? [] : pinsOf(compiled.tree);
}

/** The one source the subscription is limited to, if any. */
function boundSource(subscription: Pick<Subscription, 'source' | 'filters'>): string | undefined {
  if (subscription.source !== undefined) return subscription.source;
  const fromFilters = (filters: readonly Filter[]): string | undefined => {
    for (const filter of filters) {
      if ('exact' in filter && filter.exact['source'] !== undefined) return filter.exact['source'];
      if ('sql' in filter) {
        const [pinned] =
          sqlPins(filter.sql).find(([pin, more]) => pin?.attribute === 'source' && pin.kind === 'eq' && !more) ?? [];
        if (pinned) return pinned.value;
      }
      if ('all' in filter) {
        const found = fromFilters(filter.all);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  return fromFilters(subscription.filters ?? []);
}
