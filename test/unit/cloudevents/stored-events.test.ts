import { HTTP, type CloudEvent } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import {
  readStoredEvent,
  toBatchMessage,
  toBinaryMessage,
  toStructuredMessage,
  type AcceptedEvent,
} from '../../../functions/core/cloudevents/index.js';
import { acceptedEvent, acceptedEvents, nlEvent, parse, structuredRequest } from './fixtures.js';

/** A stored event, made the way Koerier makes them: by accepting a structured request. */
function stored(overrides: Record<string, unknown>): AcceptedEvent {
  return acceptedEvent(parse(structuredRequest(nlEvent({ time: '2021-12-10T17:31:00Z', ...overrides }))));
}

/** The official SDK's reading of a message; JSON and text bodies are handed over as strings. */
function sdkRead(message: { headers: Record<string, string>; body: Buffer }, bodyAsBytes = false): CloudEvent<unknown> {
  const event = HTTP.toEvent({
    headers: message.headers,
    body: bodyAsBytes ? message.body : message.body.toString('utf8'),
  }) as CloudEvent<unknown> | CloudEvent<unknown>[];
  if (Array.isArray(event)) expect.fail('expected one event from the SDK');
  expect(event.validate()).toBe(true);
  return event;
}

/** Every attribute we hold, as the SDK sees it (it normalises `time` to milliseconds, so compare instants). */
function expectSdkAttributes(
  sdkEvent: CloudEvent<unknown>,
  attributes: Readonly<Record<string, unknown>>,
  stringValues = false,
): void {
  const seen = sdkEvent as unknown as Record<string, unknown>;
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'time') expect(Date.parse(String(seen[name]))).toBe(Date.parse(String(value)));
    else expect(seen[name], name).toEqual(stringValues ? String(value) : value);
  }
}

const EXTENSIONS = { nlbrpnationaliteit: '0083', extinteger: 10, extboolean: true };

describe('toStructuredMessage', () => {
  it('HTTP-4: a structured delivery is application/cloudevents+json with the stored text as its body', () => {
    const event = stored({ ...EXTENSIONS, data: { bsn: '999990342' } });
    const message = toStructuredMessage(event.json);
    expect(message.headers).toEqual({ 'content-type': 'application/cloudevents+json; charset=utf-8' });
    expect(message.body.toString('utf8')).toBe(event.json);
  });

  it('HTTP-4: a structured delivery carries no ce- headers for receivers to come to depend on (HTTP-5)', () => {
    expect(
      Object.keys(toStructuredMessage(stored(EXTENSIONS).json).headers).filter((h) => h.startsWith('ce-')),
    ).toEqual([]);
  });

  it('CE-13: the official SDK and Koerier both read a structured delivery back unchanged', () => {
    const event = stored({
      ...EXTENSIONS,
      subject: '999990342',
      datacontenttype: 'application/json',
      data: { bsn: '999990342', lijst: [1, 2] },
    });
    const message = toStructuredMessage(event.json);
    const sdkEvent = sdkRead(message);
    expectSdkAttributes(sdkEvent, event.attributes);
    expect(sdkEvent.data).toEqual({ bsn: '999990342', lijst: [1, 2] });
    expect(acceptedEvent(parse(message)).json).toBe(event.json);
  });
});

describe('toBinaryMessage', () => {
  it('HTTP-2: JSON data becomes the body unchanged and attributes become ce- headers; SDK and Koerier agree', () => {
    const text =
      JSON.stringify(
        nlEvent({ time: '2021-12-10T17:31:00Z', ...EXTENSIONS, datacontenttype: 'application/json' }),
      ).slice(0, -1) + ',"data":{ "bedrag": 12345678901234567890 }}';
    const event = acceptedEvent(parse(structuredRequest(text)));
    const message = toBinaryMessage(event.json);
    expect(message.headers['content-type']).toBe('application/json');
    expect(message.headers['ce-id']).toBe(event.id);
    expect(message.body.toString('utf8')).toBe('{ "bedrag": 12345678901234567890 }');

    // Binary mode carries every attribute value as a string (HTTP binding §3.1.3).
    const sdkEvent = sdkRead(message);
    expectSdkAttributes(sdkEvent, event.attributes, true);
    const back = acceptedEvent(parse(message));
    expect(back.attributes).toEqual(
      Object.fromEntries(Object.entries(event.attributes).map(([k, v]) => [k, String(v)])),
    );
    expect(JSON.parse(back.json).data).toEqual(JSON.parse(event.json).data);
    expect(back.json).toContain('"data":{ "bedrag": 12345678901234567890 }');
  });

  it('HTTP-2: text data becomes a text body; SDK and Koerier agree', () => {
    const event = stored({ datacontenttype: 'text/plain; charset=utf-8', data: 'Hallo, wereld 🌎' });
    const message = toBinaryMessage(event.json);
    expect(message.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(message.body.toString('utf8')).toBe('Hallo, wereld 🌎');
    const sdkEvent = sdkRead(message);
    expectSdkAttributes(sdkEvent, event.attributes);
    expect(sdkEvent.data).toBe('Hallo, wereld 🌎');
    expect(acceptedEvent(parse(message)).json).toBe(event.json);
  });

  it('JSON-2: data_base64 becomes the raw bytes; SDK and Koerier agree', () => {
    const bytes = Buffer.from([0, 1, 2, 0xfe, 0xff]);
    const event = stored({ datacontenttype: 'application/octet-stream', data_base64: bytes.toString('base64') });
    const message = toBinaryMessage(event.json);
    expect(message.body.equals(bytes)).toBe(true);
    const sdkEvent = sdkRead(message, true);
    expectSdkAttributes(sdkEvent, event.attributes);
    expect(sdkEvent.data_base64).toBe(bytes.toString('base64'));
    expect(acceptedEvent(parse(message)).json).toBe(event.json);
  });

  it('HTTP-2, CE-13: number or literal data as the last member becomes exactly that body, without the closing brace', () => {
    for (const data of [42, -2.5e3, true]) {
      const event = stored({ data });
      expect(event.json.endsWith(`"data":${JSON.stringify(data)}}`)).toBe(true);
      expect(toBinaryMessage(event.json).body.toString('utf8'), String(data)).toBe(JSON.stringify(data));
    }
  });

  it('CE-7: JSON data without datacontenttype is sent as application/json, the implied type', () => {
    const event = stored({ data: { a: 1 } });
    const message = toBinaryMessage(event.json);
    expect(message.headers['content-type']).toBe('application/json');
    expect(sdkRead(message).data).toEqual({ a: 1 });
    expect(acceptedEvent(parse(message)).attributes).toEqual({
      ...event.attributes,
      datacontenttype: 'application/json',
    });
  });

  it('JSON-2: data_base64 without datacontenttype is sent without a Content-Type and reads back the same', () => {
    const event = stored({ data_base64: 'TWE=' });
    const message = toBinaryMessage(event.json);
    expect(message.headers['content-type']).toBeUndefined();
    expect(acceptedEvent(parse(message)).json).toBe(event.json);
  });

  it('JSON-1: null attributes are not sent as headers; an event without data has an empty body', () => {
    const event = stored({ subject: null, geheimnummer: null });
    const message = toBinaryMessage(event.json);
    expect(Object.keys(message.headers).sort()).toEqual(['ce-id', 'ce-source', 'ce-specversion', 'ce-time', 'ce-type']);
    expect(message.body.length).toBe(0);
  });

  it('JSON-1: an event whose data is null is sent with an empty body and no Content-Type', () => {
    const event = stored({ data: null });
    expect(JSON.parse(event.json)).toHaveProperty('data', null);
    const message = toBinaryMessage(event.json);
    expect(message.body.length).toBe(0);
    expect(message.headers['content-type']).toBeUndefined();
  });

  it('CE-7: string data without datacontenttype is JSON, so it is sent as its JSON text with application/json', () => {
    // Without datacontenttype the data is application/json (CE-7): the string "hallo", not the text hallo.
    const event = stored({ data: 'hallo' });
    const message = toBinaryMessage(event.json);
    expect(message.headers['content-type']).toBe('application/json');
    expect(message.body.toString('utf8')).toBe('"hallo"');
    expect(sdkRead(message).data).toBe('hallo');
    expect(JSON.parse(acceptedEvent(parse(message)).json).data).toBe('hallo');
  });

  it('HTTP-2: control characters and DEL are percent-encoded, each as two hex digits, so no header carries them raw', () => {
    // Validated events hold none (CE-2), but a raw DEL or tab would make an invalid HTTP header
    // (Node refuses to send one) and %9 is not percent-encoding.
    const json = JSON.stringify(nlEvent({ subject: 'a\tb\u007fc\u0001' }));
    expect(toBinaryMessage(json).headers['ce-subject']).toBe('a%09b%7Fc%01');
  });

  it('HTTP-2: values outside printable ASCII, spaces, quotes and % are percent-encoded and read back unchanged', () => {
    const event = stored({
      subject: 'café "quoted" 100% ok',
      source: 'urn:nld:gemeente-Bergen%20%28L%29.burgerzakensysteem',
    });
    const message = toBinaryMessage(event.json);
    expect(message.headers['ce-subject']).toBe('caf%C3%A9%20%22quoted%22%20100%25%20ok');
    expect(message.headers['ce-source']).toBe('urn:nld:gemeente-Bergen%2520%2528L%2529.burgerzakensysteem');
    expect(acceptedEvent(parse(message)).attributes).toEqual(event.attributes);
  });

  it('HTTP-2, issue 28: a comma is percent-encoded too, so no receiver behind API Gateway takes it for a repeated header; Koerier reads it back unchanged', () => {
    const event = stored({ subject: 'Jansen,Piet', comexampleext: 'a,b' });
    const message = toBinaryMessage(event.json);
    expect(message.headers['ce-subject']).toBe('Jansen%2CPiet');
    expect(message.headers['ce-comexampleext']).toBe('a%2Cb');
    expect(acceptedEvent(parse(message)).attributes).toEqual(event.attributes);
  });
});

describe('toBatchMessage', () => {
  it('HTTP-3: stored events become one batch body; SDK and Koerier read every member back', () => {
    const events = [stored({ id: 'een', data: { n: 1 } }), stored({ id: 'twee', ...EXTENSIONS })];
    const message = toBatchMessage(events.map((e) => e.json));
    expect(message.headers).toEqual({ 'content-type': 'application/cloudevents-batch+json; charset=utf-8' });
    const sdkEvents = HTTP.toEvent({ headers: message.headers, body: message.body.toString('utf8') }) as
      CloudEvent<unknown> | CloudEvent<unknown>[];
    if (!Array.isArray(sdkEvents)) expect.fail('expected a batch from the SDK');
    expect(sdkEvents).toHaveLength(2);
    sdkEvents.forEach((sdkEvent, i) => expectSdkAttributes(sdkEvent, events[i]!.attributes));
    expect(sdkEvents[0]!.data).toEqual({ n: 1 });
    expect(acceptedEvents(parse(message)).map((e) => e.json)).toEqual(events.map((e) => e.json));
  });

  it('HTTP-3: an empty batch is an empty array', () => {
    const message = toBatchMessage([]);
    expect(message.body.toString('utf8')).toBe('[]');
    expect(acceptedEvents(parse(message))).toEqual([]);
  });
});

describe('readStoredEvent', () => {
  it('JSON-1: reads id, source, type and the attributes without data or null members', () => {
    const json = JSON.stringify(nlEvent({ geheimnummer: null, ext: 5, data: { bsn: '1' } }));
    expect(readStoredEvent(json)).toEqual({
      id: nlEvent()['id'],
      source: nlEvent()['source'],
      type: nlEvent()['type'],
      json,
      attributes: { ...nlEvent(), ext: 5 },
    });
  });

  it('CE-13: what parse accepted reads back with the same attributes', () => {
    const event = stored({ ...EXTENSIONS, data_base64: 'TWE=' });
    expect(readStoredEvent(event.json)).toEqual(event);
  });
});
