/**
 * The claim check (EDU-1, CARD-6, CE-15): an event too large to travel inline keeps its context
 * attributes and `datacontenttype`, loses `data`/`data_base64`, and gains `dataref` — Koerier's own
 * data URL — plus two integrity extension attributes, the digest and the size of the data. Pure
 * functions over the JSON event format text; the object store and the ledger are ports.
 *
 * Extension names follow CloudEvents §3.1 as the NL GOV profile repeats it: lower-case ASCII
 * letters and digits, at most 20 characters, descriptive enough not to collide (§3.4.6), hence the
 * `koerier` prefix.
 */
import { createHash } from 'node:crypto';
import { mediaTypeOf } from '../http/messages.js';
import { isJsonMediaType } from '../cloudevents/attribute-syntax.js';
import { memberValueSpan } from '../cloudevents/json-spans.js';
import { attributesOf } from '../cloudevents/stored-event.js';

export const claimCheckAttributes = {
  /** `sha-256=:<base64>:`, the RFC 9530 form of a SHA-256 digest of the data's bytes. */
  digest: 'koerierdatadigest',
  /** The data's length in bytes (Integer). */
  size: 'koerierdatasize',
} as const;

/** How the data sat in the event, so it can be put back the same way. */
export type DataForm = 'json' | 'text' | 'base64';

export interface EventData {
  readonly bytes: Buffer;
  readonly form: DataForm;
  /** The media type a fetch answers with: `datacontenttype`, or JSON when the event implies it. */
  readonly contentType: string;
}

/** A stored event whose data went to the claim check. */
export interface PayloadReference {
  readonly payloadId: string;
  readonly digest: string;
  readonly size: number;
}

/** The data URL path: `/payloads/{payloadId}`. */
export const PAYLOAD_PATH_PREFIX = '/payloads/';
/** What an upload's `dataref` looks like before Koerier rewrites it: `<base>/payloads/uploads/{uploadId}`. */
export const UPLOAD_PATH_PREFIX = '/payloads/uploads/';

export function payloadObjectKey(payloadId: string): string {
  return `payloads/${payloadId}`;
}

export function uploadObjectKey(uploadId: string): string {
  return `uploads/${uploadId}`;
}

/** What a claim-check object holds, as far as it names the object (`payloadIdOf`). */
export interface PayloadContent {
  /** `sha-256=:<base64>:` of the bytes. */
  readonly digest: string;
  /** The media type a fetch answers with. */
  readonly contentType: string;
  /** Data moved at ingest: how it sat in the event. */
  readonly form?: DataForm;
  /** Data uploaded first (POST /payloads): the upload whose object it is. */
  readonly uploadId?: string;
}

/**
 * One object per event (CE-17: `source` + `id` name it), whatever the number of subscribers, and
 * per content: the digest, media type and form (or upload) are part of the name. Two events that
 * share `source` + `id` but not their data are duplicates the router drops (EDU-IDEM-15), yet both
 * are accepted and stored first; named by `source` + `id` alone, the second one's data replaced the
 * object and the ledger record of the first, which subscribers then fetched under the first
 * event's `dataref`, with a digest that no longer matched (issue 28, item 8; issue 36, item 2). So
 * the second gets an object and a record of its own, which expire unread, and the first's are
 * written once. The same event again (a retried publish) names the same object with the same
 * bytes, so writing it again changes nothing. S3's conditional write (`If-None-Match: *`) would
 * say the same to S3, but s3rver, the laptop's S3, ignores the header on PUT and replaces the
 * object, so the laptop could not show it; a name that no other content can have holds on both.
 */
export function payloadIdOf(source: string, id: string, content: PayloadContent): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        'payload',
        source,
        id,
        content.digest,
        content.contentType,
        content.form ?? null,
        content.uploadId ?? null,
      ]),
    )
    .digest('base64url');
}

/** A payload id as `payloadIdOf` makes them: 43 base64url characters. Anything else names nothing. */
export function isPayloadId(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/**
 * The payload id a `dataref` names (`…/payloads/<id>`, whatever its origin), or nothing when it is
 * not a Koerier data URL. A reader fetches by this id through its own gateway, never from the
 * dataref's origin: the URL came in an event, and a bearer token must not follow it.
 */
export function payloadIdInDataref(dataref: string): string | undefined {
  const path = URL.canParse(dataref) ? new URL(dataref).pathname : dataref;
  const at = path.lastIndexOf(PAYLOAD_PATH_PREFIX);
  if (at < 0) return undefined;
  const id = path.slice(at + PAYLOAD_PATH_PREFIX.length);
  return isPayloadId(id) ? id : undefined;
}

export function digestOf(bytes: Buffer): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}

/** A strong ETag from the digest (the same bytes, the same tag). */
export function etagOf(digest: string): string {
  return `"${digest
    .replace(/^sha-256=:/, '')
    .replace(/:$/, '')
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')}"`;
}

/** The event's data as bytes, or undefined when it has none. `json` is a validated event's text. */
export function eventDataOf(
  json: string,
  event: Record<string, unknown> = JSON.parse(json) as Record<string, unknown>,
): EventData | undefined {
  // Read as the stored and delivered event reads it: `"datacontenttype": null` is absent (JSON-1),
  // never a media type, which the ledger could not store (issue 36, item 11).
  const contentType = attributesOf(event)['datacontenttype'] as string | undefined;
  const base64 = event['data_base64'];
  if (typeof base64 === 'string')
    return {
      bytes: Buffer.from(base64, 'base64'),
      form: 'base64',
      contentType: contentType ?? 'application/octet-stream',
    };
  const data = event['data'];
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string' && contentType !== undefined && !isJsonMediaType(mediaTypeOf(contentType))) {
    return { bytes: Buffer.from(data, 'utf8'), form: 'text', contentType };
  }
  const [start, end] = memberValueSpan(json, 'data')!;
  return {
    bytes: Buffer.from(json.slice(start, end), 'utf8'),
    form: 'json',
    contentType: contentType ?? 'application/json',
  };
}

/**
 * The event as it travels once its data is in the claim check: every context attribute as
 * received (CE-13), `dataref` to `dataUrl`, the digest and the size.
 */
export function referencingEvent(event: Record<string, unknown>, dataUrl: string, data: EventData): string {
  return JSON.stringify({
    ...attributesOf(event),
    dataref: dataUrl,
    [claimCheckAttributes.digest]: digestOf(data.bytes),
    [claimCheckAttributes.size]: data.bytes.length,
  });
}

/**
 * The reference a stored event carries when its data is in Koerier's claim check, or undefined
 * (inline data, or a producer's own `dataref`, CE-11, which Koerier never follows).
 */
export function payloadReferenceOf(
  event: Record<string, unknown>,
  dataUrlPrefix: string,
): PayloadReference | undefined {
  const dataref = event['dataref'];
  const digest = event[claimCheckAttributes.digest];
  const size = event[claimCheckAttributes.size];
  if (typeof dataref !== 'string' || typeof digest !== 'string' || typeof size !== 'number') return undefined;
  if (!dataref.startsWith(dataUrlPrefix)) return undefined;
  const payloadId = dataref.slice(dataUrlPrefix.length);
  return isPayloadId(payloadId) ? { payloadId, digest, size } : undefined;
}

/**
 * The event with its data back inline and without the claim check's attributes: what the
 * publisher sent, for a subscriber that takes it inline. The data must match the digest.
 */
export function rehydratedEvent(event: Record<string, unknown>, bytes: Buffer, form: DataForm): string {
  const attributes = attributesOf(event);
  delete attributes['dataref'];
  delete attributes[claimCheckAttributes.digest];
  delete attributes[claimCheckAttributes.size];
  const head = JSON.stringify(attributes).slice(0, -1);
  switch (form) {
    case 'json':
      return `${head},"data":${bytes.toString('utf8')}}`;
    case 'text':
      return `${head},"data":${JSON.stringify(bytes.toString('utf8'))}}`;
    case 'base64':
      return `${head},"data_base64":"${bytes.toString('base64')}"}`;
  }
}

/**
 * Whether the rehydrated event might fit `limit` bytes: it holds at least the data's bytes. Only
 * then is the object read, and the rebuilt event measured exactly.
 */
export function mayFitInline(reference: PayloadReference, limit: number): boolean {
  return reference.size < limit;
}
