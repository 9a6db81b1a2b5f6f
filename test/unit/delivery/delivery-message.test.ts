import { describe, expect, it } from 'vitest';
import {
  decodeDelivery,
  decodeDeliveryMessage,
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import { eventReferences } from '../../../functions/core/delivery/delivery-views.js';

const event = (id: string, extra = '') =>
  `{ "specversion":"1.0","id":"${id}","source":"urn:nld:oin:1:systeem:x","type":"nl.edu.a", "data":{"big":12345678901234567890123,"quote":"\\"q\\""}${extra} }`;

const message: DeliveryMessage = {
  version: 1,
  deliveryId: '0b8c7a52-9a4e-4a43-9d0f-2f0d7d7c1a11',
  subscriptionId: 'sub-1',
  events: [event('a'), event('b', ',"ext":"x"')],
  createdAt: 1_763_800_000_000,
};

describe('delivery message (router → delivery)', () => {
  it('CE-13: the events come back byte for byte, big integers and escapes included', () => {
    const decoded = decodeDeliveryMessage(encodeDeliveryMessage(message));
    expect(decoded).toEqual(message);
    expect(decoded.events[0]).toBe(message.events[0]);
  });

  it('CE-14: an event costs its own size in the message, not an escaped copy of it', () => {
    const quoteHeavy = `{"specversion":"1.0","id":"x","source":"urn:nld:oin:1","type":"nl.a","data":${JSON.stringify(Array.from({ length: 2000 }, () => 'q'))}}`;
    const encoded = encodeDeliveryMessage({ ...message, events: [quoteHeavy] });
    expect(encoded.length).toBeLessThan(quoteHeavy.length + 200);
  });

  it('issue 15: decoding names the events as the attempt record names them, without parsing each again; one without a string source, id or type is left out', () => {
    const unnamed = '{"specversion":"1.0","id":7,"source":"urn:nld:oin:1","type":"nl.a"}';
    const withNull = '{"specversion":"1.0","id":"n","source":null,"type":"nl.a"}';
    const untyped = '{"specversion":"1.0","id":"t","source":"urn:nld:oin:1","type":5}';
    const events = [...message.events, unnamed, withNull, untyped];
    const { message: decoded, eventNames } = decodeDelivery(encodeDeliveryMessage({ ...message, events }));
    expect(decoded.events).toEqual(events);
    expect(eventNames).toEqual([
      { source: 'urn:nld:oin:1:systeem:x', id: 'a', type: 'nl.edu.a' },
      { source: 'urn:nld:oin:1:systeem:x', id: 'b', type: 'nl.edu.a' },
    ]);
    expect(eventNames).toEqual(eventReferences(events));
  });

  it('EDU-IDEM-9: the delivery key and the redrive link survive the round trip', () => {
    const redriven = { ...message, redriveOf: '11111111-1111-4111-8111-111111111111' };
    expect(decodeDeliveryMessage(encodeDeliveryMessage(redriven))).toEqual(redriven);
  });

  it('CE-16: a well-formed correlation id survives the round trip; one read back that could not be a header is dropped, the delivery kept', () => {
    const correlated = { ...message, correlationId: 'publish-req-42' };
    expect(decodeDeliveryMessage(encodeDeliveryMessage(correlated))).toEqual(correlated);
    // It becomes the X-Correlation-ID header of the webhook request: a bad one must not travel on, nor stop the delivery.
    const decoded = decodeDeliveryMessage(encodeDeliveryMessage({ ...message, correlationId: 'bad\r\nx-injected: 1' }));
    expect(decoded).toEqual(message);
    expect('correlationId' in decoded).toBe(false);
  });

  it('EDU-18: anything else on the deliveries queue is refused as not a delivery message', () => {
    expect(() =>
      decodeDeliveryMessage(
        '{"version":1,"deliveryId":"x","subscriptionId":"s","events":["not an event"],"createdAt":1}',
      ),
    ).toThrow(TypeError);
    expect(() => decodeDeliveryMessage('{"hello":"world"}')).toThrow(TypeError);
  });
});
