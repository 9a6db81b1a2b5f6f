/**
 * The events of a delivery in each of Koerier's content modes (CloudEvents HTTP binding 1.0.2):
 * structured (`application/cloudevents+json`, one event as the body), batch
 * (`application/cloudevents-batch+json`, an array) and binary (the attributes in `ce-` headers,
 * percent-encoded, the data as the body with its own Content-Type).
 */
import { BATCH_MEDIA_TYPE, STRUCTURED_MEDIA_TYPE } from './handshake.js';

/** A CloudEvent as a JSON object: `specversion`, `id`, `source`, `type`, optional attributes and `data`. */
export interface CloudEvent {
  readonly specversion: string;
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly [attribute: string]: unknown;
}

export type ContentMode = 'structured' | 'batch' | 'binary';

export function contentModeOf(contentType: string | undefined): ContentMode {
  const mediaType = mediaTypeOf(contentType);
  if (mediaType === BATCH_MEDIA_TYPE) return 'batch';
  if (mediaType === STRUCTURED_MEDIA_TYPE) return 'structured';
  return 'binary';
}

/** The delivery's events, or a reason they cannot be read. */
export function eventsOf(
  headers: Readonly<Record<string, string>>,
  body: Uint8Array,
): { readonly mode: ContentMode; readonly events: CloudEvent[] } | { readonly problem: string } {
  const mode = contentModeOf(headers['content-type']);
  const text = new TextDecoder().decode(body);
  if (mode === 'binary') {
    const attributes: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(headers))
      if (name.startsWith('ce-')) attributes[name.slice(3)] = percentDecoded(value);
    const contentType = headers['content-type'];
    if (contentType !== undefined) attributes['datacontenttype'] = contentType;
    if (body.length > 0) attributes['data'] = isJson(contentType) ? parsed(text) : text;
    const event = asEvent(attributes);
    return event ? { mode, events: [event] } : { problem: 'the ce- headers do not make a CloudEvent' };
  }
  const value = parsed(text);
  const candidates = mode === 'batch' ? (Array.isArray(value) ? value : [undefined]) : [value];
  const events = candidates.map(asEvent);
  if (events.some((event) => event === undefined))
    return { problem: `the body is not ${mode === 'batch' ? 'an array of CloudEvents' : 'a CloudEvent'} in JSON` };
  return { mode, events: events as CloudEvent[] };
}

function asEvent(value: unknown): CloudEvent | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const required = ['specversion', 'id', 'source', 'type'];
  return required.every((name) => typeof record[name] === 'string') ? (record as CloudEvent) : undefined;
}

function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

function isJson(contentType: string | undefined): boolean {
  const mediaType = mediaTypeOf(contentType);
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function percentDecoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
