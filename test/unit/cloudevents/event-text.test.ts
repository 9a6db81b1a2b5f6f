/**
 * The event text value (issue 29, item 4): one event read once per hop. Whatever shortcut it takes
 * — the data skipped when parsing a large event, its escaped size counted without escaping — it
 * must read what a whole JSON.parse and JSON.stringify would.
 */
import { describe, expect, it } from 'vitest';
import { EventText, jsonEscapedBytes } from '../../../functions/core/cloudevents/event-text.js';
import { toBinaryMessage } from '../../../functions/core/cloudevents/index.js';
import { attributesOf } from '../../../functions/core/cloudevents/stored-event.js';

const large = (data: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    specversion: '1.0',
    id: 'e-1',
    source: 'urn:nld:oin:0001',
    type: 'nl.edu.leerling.ingeschreven.v1',
    geheim: null,
    data,
    ...extra,
    datacontenttype: 'application/json',
    tail: 7,
  });
const bulky = { rows: Array.from({ length: 80 }, (_, i) => ({ i, text: 'a "quoted" \\ value', id: 'not-the-id' })) };

describe('EventText (issue 29, item 4)', () => {
  it('issue 29 item 4: the attributes of a large event, parsed without its data, are those of a whole parse (members after the data, nulls left out)', () => {
    for (const json of [
      large(bulky),
      large('text before the base64', { data_base64: 'A'.repeat(4000) }),
      `  ${large(bulky).replace('{', '{ ')}  `,
    ]) {
      expect(json.length).toBeGreaterThan(1024);
      expect(new EventText(json).attributes).toEqual(attributesOf(JSON.parse(json) as Record<string, unknown>));
    }
  });

  it('issue 29 item 4: the attributes are parsed once, however often they are read', () => {
    const event = new EventText(large(bulky));
    expect(event.attributes).toBe(event.attributes);
    expect([event.id, event.source, event.type]).toEqual([
      'e-1',
      'urn:nld:oin:0001',
      'nl.edu.leerling.ingeschreven.v1',
    ]);
  });

  it('issue 29 item 4: the escaped size is what JSON.stringify makes of the text, without building it', () => {
    for (const text of [large(bulky), '{"a":"\\"\\\\"}\n\t\r', 'é€😀 "x"', '{"lone":"\ud800"}', ''])
      expect(jsonEscapedBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text)) - 2);
    expect(new EventText(large(bulky)).escapedBytes).toBe(Buffer.byteLength(JSON.stringify(large(bulky))) - 2);
  });

  it('HTTP-4, issue 29 item 4: a binary rendering from an event text is the rendering from its string, data byte for byte', () => {
    const json = large(bulky);
    const text = new EventText(json);
    void text.attributes;
    const fromText = toBinaryMessage(text);
    expect(fromText).toEqual(toBinaryMessage(json));
    expect(fromText.body.toString('utf8')).toBe(JSON.stringify(bulky));
  });
});
