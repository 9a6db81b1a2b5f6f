/**
 * The `sequence` Koerier stamps on each event of an ordered subscription (issue 33, ORD-2): the
 * CloudEvents sequence extension, zero-padded (ordering-settings.ts `formatSequence`). The event's
 * text is kept byte for byte but for that one member (CE-13 otherwise): a publisher's own
 * `sequence` is replaced, as the subscriber reads Koerier's order in it, not the publisher's; and
 * a `sequencetype` next to it would describe the publisher's value, so it goes too.
 */
import { memberValueSpans, skipWhitespace } from '../cloudevents/json-spans.js';
import { formatSequence } from './ordering-settings.js';

export function stampSequence(eventJson: string, sequence: number): string {
  const value = JSON.stringify(formatSequence(sequence));
  const spans = memberValueSpans(eventJson, ['sequence', 'sequencetype']);
  if (spans.has('sequencetype')) return stampSequence(withoutMember(eventJson, 'sequencetype'), sequence);
  const span = spans.get('sequence');
  if (span) return `${eventJson.slice(0, span[0])}${value}${eventJson.slice(span[1])}`;
  const open = skipWhitespace(eventJson, 0);
  if (eventJson[open] !== '{') throw new TypeError('not a JSON object');
  return `${eventJson.slice(0, open + 1)}"sequence":${value},${eventJson.slice(open + 1)}`;
}

/** The event without one top-level member (its value re-serialised in place of the text: only `sequencetype`, a string). */
function withoutMember(eventJson: string, name: string): string {
  const parsed = JSON.parse(eventJson) as Record<string, unknown>;
  delete parsed[name];
  // Rare (a publisher that set sequencetype): re-serialised whole, data included, which JSON.stringify keeps equal in value.
  return JSON.stringify(parsed);
}
