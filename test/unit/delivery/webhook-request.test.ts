import { HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import type { DeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import { deliveryFormat, unsendableHeader, webhookRequest } from '../../../functions/core/delivery/webhook-request.js';

const event = (id: string) =>
  `{"specversion":"1.0","id":"${id}","source":"urn:nld:oin:00000001234567890000:systeem:test","type":"nl.example.thing.happened.v1",` +
  `"datacontenttype":"application/json","myextension":"kept as is","data":{"b":1,  "a":[2,3]}}`;

const message = (events: string[]): DeliveryMessage => ({
  version: 1,
  deliveryId: '5b7e2c6a-5d1e-4c3f-9a0b-1c2d3e4f5a6b',
  subscriptionId: 's1',
  events,
  createdAt: 0,
});

describe('the delivery request', () => {
  it('HTTP-4, CE-13, EDU-IDEM-2, WH-3: structured mode by default, the event byte for byte, with key, origin and bearer token', () => {
    const request = webhookRequest({
      message: message([event('e1')]),
      sink: 'https://hooks.example/x',
      format: 'structured',
      origin: 'koerier.example',
      accessToken: 'tok-1',
    });
    expect(request.url).toBe('https://hooks.example/x');
    expect(request.body.toString('utf8')).toBe(event('e1'));
    expect(request.headers).toMatchObject({
      'content-type': 'application/cloudevents+json; charset=utf-8',
      'idempotency-key': '5b7e2c6a-5d1e-4c3f-9a0b-1c2d3e4f5a6b',
      'webhook-request-origin': 'koerier.example',
      authorization: 'Bearer tok-1',
    });
    const parsed = HTTP.toEvent({ headers: request.headers, body: request.body.toString('utf8') });
    expect(parsed).toMatchObject({ id: 'e1', myextension: 'kept as is', data: { b: 1, a: [2, 3] } });
  });

  it('CE-16: the receiver gets the publish request’s correlation id in X-Correlation-ID, outside the event; without one, no such header', () => {
    const parts = { sink: 'https://hooks.example/x', format: 'structured' as const, origin: 'o', accessToken: 't' };
    const correlated = webhookRequest({
      ...parts,
      message: { ...message([event('e1')]), correlationId: 'publish-req-42' },
    });
    expect(correlated.headers['x-correlation-id']).toBe('publish-req-42');
    expect(correlated.body.toString('utf8')).toBe(event('e1'));
    expect(Object.keys(webhookRequest({ ...parts, message: message([event('e1')]) }).headers)).not.toContain(
      'x-correlation-id',
    );
  });

  it('EDU-18 (replays, docs/REPLAY.md): a replayed delivery names its replay and the event’s place in it beside the event; a first delivery does not', () => {
    const parts = { sink: 'https://hooks.example/x', format: 'binary' as const, origin: 'o', accessToken: 't' };
    const replayed = webhookRequest({
      ...parts,
      message: { ...message([event('e1')]), replay: { id: 'r-9', sequence: 7 } },
    });
    expect(replayed.headers).toMatchObject({ 'koerier-replay-id': 'r-9', 'koerier-replay-sequence': '7' });
    const first = Object.keys(webhookRequest({ ...parts, message: message([event('e1')]) }).headers);
    expect(first.filter((name) => name.startsWith('koerier-replay'))).toEqual([]);
  });

  it('WH-3: a delivery request always carries a bearer token: without one it cannot be built', () => {
    expect(() =>
      webhookRequest({
        message: message([event('e1')]),
        sink: 'https://hooks.example/x',
        format: 'structured',
        origin: 'o',
      } as never),
    ).toThrow(/WH-3/);
    expect(() =>
      webhookRequest({
        message: message([event('e1')]),
        sink: 'https://hooks.example/x',
        format: 'structured',
        origin: 'o',
        accessToken: '',
      }),
    ).toThrow(/WH-3/);
  });

  it('review #8: a Content-Type made from a datacontenttype that cannot be a header is found before anything is sent', () => {
    const bad = event('e3').replace(
      '"datacontenttype":"application/json"',
      '"datacontenttype":"text/plain; name=\\"\u20ac\\""',
    );
    const binary = webhookRequest({
      message: message([bad]),
      sink: 'https://hooks.example/x',
      format: 'binary',
      origin: 'o',
      accessToken: 't',
    });
    expect(unsendableHeader(binary)).toBe('content-type');
    // Structured mode carries it in the body: sendable.
    expect(
      unsendableHeader(
        webhookRequest({
          message: message([bad]),
          sink: 'https://hooks.example/x',
          format: 'structured',
          origin: 'o',
          accessToken: 't',
        }),
      ),
    ).toBeUndefined();
    expect(
      unsendableHeader(
        webhookRequest({
          message: message([event('e4')]),
          sink: 'https://hooks.example/x',
          format: 'binary',
          origin: 'o',
          accessToken: 't',
        }),
      ),
    ).toBeUndefined();
  });

  it('HTTP-4: binary mode puts the attributes in ce- headers and the data in the body', () => {
    const request = webhookRequest({
      message: message([event('e2')]),
      sink: 'https://hooks.example/x',
      format: 'binary',
      origin: 'o',
      accessToken: 't',
    });
    expect(request.headers).toMatchObject({
      'ce-id': 'e2',
      'ce-myextension': 'kept%20as%20is',
      'content-type': 'application/json',
    });
    expect(request.body.toString('utf8')).toBe('{"b":1,  "a":[2,3]}');
    // The SDK parses it; it does not percent-decode header values (HTTP binding 1.0.2 §3.1.3.2), so the
    // extension arrives still encoded there.
    expect(HTTP.toEvent({ headers: request.headers, body: request.body.toString('utf8') })).toMatchObject({
      id: 'e2',
      type: 'nl.example.thing.happened.v1',
      data: { b: 1, a: [2, 3] },
    });
  });

  it('EDU-11: a batch goes out as one application/cloudevents-batch+json array of the events as accepted', () => {
    const request = webhookRequest({
      message: message([event('a'), event('b')]),
      sink: 'https://hooks.example/x',
      format: 'batch',
      origin: 'o',
      accessToken: 't',
    });
    expect(request.headers['content-type']).toBe('application/cloudevents-batch+json; charset=utf-8');
    expect(request.body.toString('utf8')).toBe(`[${event('a')},${event('b')}]`);
    const parsed = HTTP.toEvent({ headers: request.headers, body: request.body.toString('utf8') });
    expect(Array.isArray(parsed) && parsed.map((e) => e.id)).toEqual(['a', 'b']);
  });

  it('JSON-3: batches only reach targets that declared they take them; otherwise each event goes on its own', () => {
    expect(deliveryFormat({ contentMode: 'batch', batchSupported: true }, 3)).toBe('batch');
    expect(deliveryFormat({ contentMode: 'batch', batchSupported: true }, 1)).toBe('batch');
    expect(deliveryFormat({ contentMode: 'batch', batchSupported: false }, 1)).toBe('structured');
    expect(deliveryFormat({ contentMode: 'batch', batchSupported: false }, 3)).toBe('split');
    expect(deliveryFormat({ contentMode: 'structured', batchSupported: true }, 2)).toBe('split');
    expect(deliveryFormat({ contentMode: 'binary', batchSupported: false }, 1)).toBe('binary');
  });
});
