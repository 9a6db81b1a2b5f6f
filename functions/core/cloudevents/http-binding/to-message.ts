/**
 * Outgoing HTTP messages for deliveries, from stored events: structured mode by default (HTTP-4),
 * binary and batch per subscription. Whether a target may receive a batch at all (JSON-3) is the
 * delivery policy's decision, not this module's.
 */
import { mediaTypeOf } from '../../http/messages.js';
import { isJsonMediaType } from '../attribute-syntax.js';
import { EventText } from '../event-text.js';

const STRUCTURED_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8';
const BATCH_CONTENT_TYPE = 'application/cloudevents-batch+json; charset=utf-8';

export function toStructuredMessage(json: string): { headers: Record<string, string>; body: Buffer } {
  return { headers: { 'content-type': STRUCTURED_CONTENT_TYPE }, body: Buffer.from(json, 'utf8') };
}

export function toBatchMessage(jsons: readonly string[]): { headers: Record<string, string>; body: Buffer } {
  return { headers: { 'content-type': BATCH_CONTENT_TYPE }, body: Buffer.from(`[${jsons.join(',')}]`, 'utf8') };
}

/**
 * HTTP binding §3.1: every attribute becomes a percent-encoded `ce-` header, datacontenttype
 * becomes Content-Type and the data the body. JSON data is sent as its stored text, unchanged.
 * An event with JSON `data` and no datacontenttype gets `application/json`, the implied type,
 * which the core spec (§3.4.1) says to set explicitly when changing format.
 */
export function toBinaryMessage(stored: string | EventText): { headers: Record<string, string>; body: Buffer } {
  // Read through the event text: its attributes are parsed once per hop and its data never (issue 29, item 4).
  const event = typeof stored === 'string' ? new EventText(stored) : stored;
  const { attributes, json } = event;
  const headers: Record<string, string> = {};
  for (const name in attributes) {
    if (name !== 'datacontenttype') headers[`ce-${name}`] = percentEncoded(String(attributes[name]));
  }
  const contentType = attributes['datacontenttype'] as string | undefined;
  if (contentType !== undefined) headers['content-type'] = contentType;

  const base64 = valueAt(json, event.dataSpan('data_base64'));
  if (base64 !== undefined && base64.startsWith('"'))
    return { headers, body: Buffer.from(JSON.parse(base64) as string, 'base64') };
  const span = event.dataSpan('data');
  const data = valueAt(json, span);
  if (data === undefined || data === 'null') return { headers, body: Buffer.alloc(0) };
  if (data.startsWith('"') && contentType !== undefined && !isJsonMediaType(mediaTypeOf(contentType))) {
    return { headers, body: Buffer.from(JSON.parse(data) as string, 'utf8') };
  }
  headers['content-type'] ??= 'application/json';
  return { headers, body: Buffer.from(json.slice(span![0], span![1]), 'utf8') };
}

/** The value's text at `span`, without the whitespace around it. */
function valueAt(json: string, span: readonly [number, number] | undefined): string | undefined {
  return span === undefined ? undefined : json.slice(span[0], span[1]).trim();
}

/**
 * Printable ASCII except space, `"` and `%` travels as is (HTTP binding §3.1.3.2); so does `,`
 * not: behind API Gateway a raw comma cannot be told from a repeated header, and Koerier's own
 * ingest refuses it (issue 28). The binding lets a receiver decode any character encoded.
 */
const HEADER_SAFE = /^[\x21\x23\x24\x26-\x2B\x2D-\x7E]*$/;

function percentEncoded(value: string): string {
  if (HEADER_SAFE.test(value)) return value;
  let encoded = '';
  for (const character of value) {
    const code = character.codePointAt(0)!;
    if (code > 0x20 && code < 0x7f && code !== 0x22 && code !== 0x25 && code !== 0x2c) {
      encoded += character;
    } else {
      for (const byte of Buffer.from(character, 'utf8'))
        encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return encoded;
}
