/**
 * The receiver kit's rules that need no Koerier host (issue 30 item 6): what it answers when the
 * application fails or is still busy, the handshake's WH-5 choices, a bounded in-memory store, and
 * the events of each content mode. The protocol's vectors are in receiver-vectors.test.ts, the kit
 * against the laptop host in test/receiver/.
 */
import { describe, expect, it } from 'vitest';
import {
  createReceiver,
  memoryDeduplicationStore,
  staticToken,
  type CloudEvent,
  type ReceiverOptions,
} from '../../../receiver/src/index.js';

const URL_ = 'https://ontvanger.example.org/hook';
const event = (id: string) => JSON.stringify({ specversion: '1.0', id, source: 'urn:test', type: 'nl.test.v1' });

function delivery(key: string | undefined, body: string, headers: Record<string, string> = {}) {
  return {
    method: 'POST',
    url: URL_,
    headers: {
      authorization: 'Bearer t0ken',
      'content-type': 'application/cloudevents+json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...headers,
    },
    body,
  };
}

function receiverWith(onEvents: ReceiverOptions['onEvents'], options: Partial<ReceiverOptions> = {}) {
  return createReceiver({
    handshake: { origins: ['koerier.example.org'] },
    token: staticToken('t0ken'),
    onEvents,
    onError: () => undefined,
    ...options,
  });
}

describe('the receiver kit without a host (issue 30 item 6)', () => {
  it('issue 30 item 6, EDU-IDEM-15: a delivery whose handler failed (500) is not remembered, so its retry is handled; after that the key is a duplicate', async () => {
    let calls = 0;
    const receiver = receiverWith(() => {
      calls++;
      if (calls === 1) throw new Error('database down');
    });
    const first = await receiver.handle(delivery('k-1', event('e-1')));
    expect(first.status).toBe(500);
    expect(first.body).not.toContain('database down');
    expect((await receiver.handle(delivery('k-1', event('e-1')))).status).toBe(204);
    expect((await receiver.handle(delivery('k-1', event('e-1')))).status).toBe(200);
    expect(calls).toBe(2);
  });

  it('issue 30 item 6: a handler answer that is not 2xx is passed on and the key not remembered', async () => {
    let calls = 0;
    const receiver = receiverWith(() =>
      ++calls === 1 ? { status: 503, headers: { 'retry-after': '30' } } : undefined,
    );
    expect(await receiver.handle(delivery('k-2', event('e-2')))).toMatchObject({
      status: 503,
      headers: { 'retry-after': '30' },
    });
    expect((await receiver.handle(delivery('k-2', event('e-2')))).status).toBe(204);
    expect(calls).toBe(2);
  });

  it('issue 30 item 6, EDU-IDEM-18: a retry arriving while the first attempt is still handled gets 503 with Retry-After, not a final 409', async () => {
    let release!: () => void;
    const busy = new Promise<void>((resolve) => (release = resolve));
    const receiver = receiverWith(() => busy);
    const first = receiver.handle(delivery('k-3', event('e-3')));
    const second = await receiver.handle(delivery('k-3', event('e-3')));
    expect(second).toMatchObject({ status: 503, headers: { 'retry-after': '5' } });
    release();
    expect((await first).status).toBe(204);
  });

  it('issue 30 item 6, EDU-IDEM-18: a delivery without an Idempotency-Key is refused 400 and not handled', async () => {
    let calls = 0;
    const receiver = receiverWith(() => void calls++);
    expect((await receiver.handle(delivery(undefined, event('e-4')))).status).toBe(400);
    expect(calls).toBe(0);
  });

  it('issue 30 item 6: events are read in structured, batch and binary mode; a body that is no CloudEvent is 415', async () => {
    const seen: CloudEvent[][] = [];
    const receiver = receiverWith((events) => void seen.push(events));
    await receiver.handle(delivery('k-5', event('s-1')));
    await receiver.handle(
      delivery('k-6', `[${event('b-1')},${event('b-2')}]`, { 'content-type': 'application/cloudevents-batch+json' }),
    );
    await receiver.handle(
      delivery('k-7', '{"leerling":"L-42"}', {
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': 'bin-1',
        'ce-source': 'urn%3Atest',
        'ce-type': 'nl.test.v1',
      }),
    );
    expect(seen.map((events) => events.map((e) => e.id))).toEqual([['s-1'], ['b-1', 'b-2'], ['bin-1']]);
    expect(seen[2]![0]).toMatchObject({
      source: 'urn:test',
      datacontenttype: 'application/json',
      data: { leerling: 'L-42' },
    });
    expect((await receiver.handle(delivery('k-8', '{"not":"an event"}'))).status).toBe(415);
  });

  it("issue 30 item 6, WH-4: a plain OPTIONS says what the hook takes; batches are declared in Accept-Post; 'later' withholds consent", async () => {
    const receiver = receiverWith(() => undefined, {
      handshake: {
        origins: ['*'],
        batches: true,
        decide: ({ origin }) => (origin === 'slow.example' ? 'later' : 'consent'),
      },
    });
    expect(await receiver.handle({ method: 'OPTIONS', url: URL_, headers: {}, body: '' })).toMatchObject({
      status: 204,
      headers: {
        allow: 'POST, OPTIONS',
        'accept-post': 'application/cloudevents+json, application/cloudevents-batch+json',
      },
    });
    const later = await receiver.handle({
      method: 'OPTIONS',
      url: URL_,
      headers: { 'webhook-request-origin': 'slow.example', 'webhook-request-callback': 'https://k/approve' },
      body: '',
    });
    expect(later.status).toBe(200);
    expect(later.headers).not.toHaveProperty('webhook-allowed-origin');
    const any = await receiver.handle({
      method: 'OPTIONS',
      url: URL_,
      headers: { 'WebHook-Request-Origin': 'x.example' },
      body: '',
    });
    expect(any.headers['webhook-allowed-origin']).toBe('x.example');
  });

  it('issue 30 item 6, WH-5: with the handshake agreed out of band (handshake: false) OPTIONS is 405, and deliveries are still taken', async () => {
    const receiver = receiverWith(() => undefined, { handshake: false });
    const answer = await receiver.handle({
      method: 'OPTIONS',
      url: URL_,
      headers: { 'webhook-request-origin': 'koerier.example.org' },
      body: '',
    });
    expect(answer.status).toBe(405);
    expect(answer.headers).not.toHaveProperty('webhook-allowed-origin');
    expect((await receiver.handle(delivery('k-9', event('e-9')))).status).toBe(204);
    expect((await receiver.handle({ ...delivery('k-10', event('e-10')), method: 'PUT' })).status).toBe(405);
  });

  it('issue 30 item 6: the in-memory store forgets the oldest key past its bound, and a key after its TTL', async () => {
    let now = 0;
    const store = memoryDeduplicationStore({ maxEntries: 2, now: () => now });
    await store.remember('a', 60);
    await store.remember('b', 60);
    await store.remember('c', 60);
    expect([await store.seen('a'), await store.seen('b'), await store.seen('c')]).toEqual([false, true, true]);
    now = 61_000;
    expect(await store.seen('b')).toBe(false);
  });

  it('issue 30 item 6, WH-3: staticToken accepts the one token only', async () => {
    const check = staticToken('t0ken');
    expect(check('t0ken')).toBe(true);
    expect(check('t0ken2')).toBe(false);
    expect(check('')).toBe(false);
  });
});
