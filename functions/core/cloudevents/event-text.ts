/**
 * One event as it travels between Koerier's hops (issue 29, item 4): the JSON event format text
 * exactly as accepted (CE-13), which is what every hop passes on, and what the hops read of it,
 * each worked out at most once and kept — the context attributes (parsed without the data, which no
 * hop but a binary rendering reads, and that only as text), where the data sits in the text, its
 * size in UTF-8 and its size once escaped into a JSON string (a pull answer counts what Lambda
 * counts). The router, the delivery function and the pull function each read an event through one.
 */
import { acceptedEvent, type AcceptedEvent } from './accepted-event.js';
import type { Attributes } from './event-validation.js';
import { memberValueSpans, type Span } from './json-spans.js';
import { attributesOf } from './stored-event.js';

const DATA_MEMBERS = ['data', 'data_base64'] as const;
/** Below this a whole parse costs less than finding the data first (measured: bench/event-hops.ts). */
const SKIP_DATA_FROM_LENGTH = 1024;

export class EventText {
  private parsedAttributes: Attributes | undefined;
  private dataSpans: ReadonlyMap<string, Span> | undefined;
  private utf8Bytes: number | undefined;
  private escapedLength: number | undefined;

  /** `json` must be an event Koerier validated before (a stored event); `attributes`, when the caller holds them already. */
  constructor(
    readonly json: string,
    attributes?: Attributes,
  ) {
    this.parsedAttributes = attributes;
  }

  /** Context attributes and extensions, without data/data_base64; null members unset (JSON-1). Parsed once. */
  get attributes(): Readonly<Attributes> {
    return (this.parsedAttributes ??= this.parseAttributes());
  }

  get id(): string {
    return this.attributes['id'] as string;
  }

  get source(): string {
    return this.attributes['source'] as string;
  }

  get type(): string {
    return this.attributes['type'] as string;
  }

  /** Where the value of `data` (or `data_base64`) sits in `json`, whitespace around it included; undefined when absent. */
  dataSpan(member: 'data' | 'data_base64'): Span | undefined {
    return (this.dataSpans ??= memberValueSpans(this.json, DATA_MEMBERS)).get(member);
  }

  /** The text's size in UTF-8. */
  get bytes(): number {
    return (this.utf8Bytes ??= Buffer.byteLength(this.json));
  }

  /** Its size as the content of a JSON string (`JSON.stringify(json)` without the quotes), without building that string. */
  get escapedBytes(): number {
    return (this.escapedLength ??= jsonEscapedBytes(this.json, this.bytes));
  }

  private parseAttributes(): Attributes {
    if (this.json.length < SKIP_DATA_FROM_LENGTH) return attributesOf(JSON.parse(this.json) as Record<string, unknown>);
    // The data's value becomes null, which attributesOf leaves out: the rest is parsed, the data only walked.
    let text = this.json;
    const spans = [...DATA_MEMBERS.map((member) => this.dataSpan(member))].filter((span) => span !== undefined);
    for (const [start, end] of spans.sort((a, b) => b[0] - a[0]))
      text = `${text.slice(0, start)}null${text.slice(end)}`;
    return attributesOf(JSON.parse(text) as Record<string, unknown>);
  }
}

/** Reads an event that Koerier validated earlier, now (a text that is not one throws here), as a plain value. */
export function readStoredEvent(json: string): AcceptedEvent {
  return acceptedEvent(new EventText(json).attributes, json);
}

/**
 * What JSON.stringify adds to a valid JSON text: a backslash before each `"` and `\`, and before the
 * whitespace it may hold between tokens (LF, CR, tab). No other control character can stand raw in
 * JSON; a lone surrogate (which UTF-8 cannot carry, so a stored event never holds one) is measured
 * by JSON.stringify itself.
 */
export function jsonEscapedBytes(json: string, bytes = Buffer.byteLength(json)): number {
  let added = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c === 0x0a || c === 0x0d || c === 0x09) added++;
    else if (c >= 0xd800 && c <= 0xdfff) return Buffer.byteLength(JSON.stringify(json)) - 2;
  }
  return bytes + added;
}
