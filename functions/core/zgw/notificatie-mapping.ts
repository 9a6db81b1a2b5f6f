/**
 * A notificatie is a CloudEvent (issue 34; docs/ZGW.md, "The mapping"). Both ways:
 *
 * - `notificatieAsCloudEvent`: `type` `nl.overheid.<kanaal>.<resource>.<actie>` (as Open
 *   Notificaties builds it), `source` the publishing client's registered source, `subject` the
 *   resource's identifier (the last segment of `resourceUrl`), `time` the `aanmaakdatum`, and in
 *   `data` the whole notificatie: `resourceUrl`, `hoofdObject` and `kenmerken` unshortened, where
 *   Open Notificaties keeps only the last path segment; and the kenmerken once more as the
 *   extension attribute `zgwkenmerken` (JSON text), because `data` may travel by reference (the
 *   claim check moves the data of an event above 64 KiB) and an abonnement's filters must still
 *   read them where the data is not at hand. `id` is derived from the publisher and the
 *   notificatie, so a notificatie sent again is the same event (Koerier's source + id duplicate
 *   check drops it) and its retry the same request (the Idempotency-Key below).
 * - `cloudEventAsNotificatie`: the notificatie back, exactly as published, for an event this
 *   adapter made; and for a CloudEvent published by others through POST /events, the notificatie
 *   where the mapping allows it (a `nl.overheid.<kanaal>.<resource>.<actie>` type and `data` with
 *   `resourceUrl` and `hoofdObject`), else none: such an event reaches CloudEvents subscribers only.
 */
import { createHash } from 'node:crypto';
import type { Notificatie } from './zgw-bodies.js';

export const ZGW_TYPE_PREFIX = 'nl.overheid.';
/**
 * The extension attribute that carries a notificatie's kenmerken beside `data` (JSON text of the
 * string map), for the filters of abonnementen (./zgw-filters.ts) when `data` is in the claim check.
 */
export const KENMERKEN_ATTRIBUTE = 'zgwkenmerken';
/** Marks `data` as a notificatie this adapter wrote, so the way back is exact. */
export const NOTIFICATIE_DATA_SCHEMA = 'urn:koerier:zgw:notificatie';

export interface NotificatieEvent {
  readonly specversion: '1.0';
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly subject: string;
  readonly time: string;
  readonly datacontenttype: 'application/json';
  readonly dataschema: string;
  readonly data: Notificatie;
  readonly [KENMERKEN_ATTRIBUTE]?: string;
}

export function zgwEventType(kanaal: string, resource: string, actie: string): string {
  return `${ZGW_TYPE_PREFIX}${kanaal}.${resource}.${actie}`;
}

/** The resource's identifier: the last non-empty path segment of its URL (a zaak's UUID). */
export function resourceIdentifier(resourceUrl: string): string {
  const segments = new URL(resourceUrl).pathname.split('/').filter((segment) => segment !== '');
  return segments.at(-1) ?? resourceUrl;
}

export function notificatieAsCloudEvent(notificatie: Notificatie, publisher: string, source: string): NotificatieEvent {
  const data: Notificatie = { ...notificatie, kenmerken: notificatie.kenmerken ?? {} };
  return {
    specversion: '1.0',
    id: uuidFrom(`${publisher}\n${canonicalJson(data)}`),
    source,
    type: zgwEventType(notificatie.kanaal, notificatie.resource, notificatie.actie),
    subject: resourceIdentifier(notificatie.resourceUrl),
    time: new Date(notificatie.aanmaakdatum).toISOString(),
    datacontenttype: 'application/json',
    dataschema: NOTIFICATIE_DATA_SCHEMA,
    data,
    ...(Object.keys(data.kenmerken ?? {}).length > 0 ? { [KENMERKEN_ATTRIBUTE]: JSON.stringify(data.kenmerken) } : {}),
  };
}

/** The Idempotency-Key of a notificatie's ingest: a retried POST /notificaties is answered from the first one. */
export function notificatieIdempotencyKey(publisher: string, notificatie: Notificatie): string {
  return uuidFrom(`idempotency\n${publisher}\n${canonicalJson(notificatie)}`);
}

interface EventLike {
  readonly type: string;
  readonly time?: string;
  readonly source: string;
  readonly dataschema?: string;
  readonly data?: unknown;
}

/** The notificatie a subscriber of the ZGW API receives for this CloudEvent, or undefined when it has none. */
export function cloudEventAsNotificatie(event: EventLike): Notificatie | undefined {
  if (!event.type.startsWith(ZGW_TYPE_PREFIX)) return undefined;
  const parts = event.type.slice(ZGW_TYPE_PREFIX.length).split('.');
  if (parts.length !== 3 || parts.some((part) => part === '')) return undefined;
  const [kanaal, resource, actie] = parts as [string, string, string];
  const data = event.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const record = data as Record<string, unknown>;
  const { resourceUrl, hoofdObject } = record;
  if (typeof resourceUrl !== 'string' || !URL.canParse(resourceUrl)) return undefined;
  if (typeof hoofdObject !== 'string' || !URL.canParse(hoofdObject)) return undefined;
  if (event.dataschema === NOTIFICATIE_DATA_SCHEMA) return record as unknown as Notificatie;
  return {
    kanaal,
    source: event.source.slice(0, 100),
    hoofdObject,
    resource,
    resourceUrl,
    actie,
    aanmaakdatum: event.time ?? new Date(0).toISOString(),
    kenmerken: stringMembers(record['kenmerken']),
  };
}

/** The members of a kenmerken object that are strings (Open Notificaties' kenmerken are a string map). */
export function stringMembers(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

/** JSON with the members of every object sorted, so equal notificaties hash alike. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    typeof member === 'object' && member !== null && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : member,
  );
}

/** A UUID in version 4's form (version and variant bits set) from the SHA-256 of `text`: stable, and accepted where a UUIDv4 is asked. */
export function uuidFrom(text: string): string {
  const bytes = createHash('sha256').update(text).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
