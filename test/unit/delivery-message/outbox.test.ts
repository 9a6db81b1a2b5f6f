/**
 * One outbox, one mayReceive, one place for batch eligibility and delivery keys (issue 29, item 3).
 */
import { describe, expect, it } from 'vitest';
import { EventText } from '../../../functions/core/cloudevents/event-text.js';
import {
  decodeDelivery,
  decodeDeliveryMessage,
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import { takesBatches } from '../../../functions/core/delivery-message/delivery-rules.js';
import { queueOutbox } from '../../../functions/core/delivery-message/outbox.js';
import { mayReceive } from '../../../functions/core/routing/may-receive.js';

const message = (subscriptionId: string, events: readonly string[] = ['{"id":"1"}']): DeliveryMessage => ({
  version: 1,
  deliveryId: `key-${subscriptionId}`,
  subscriptionId,
  events,
  createdAt: 1,
});

function recordingOutbox() {
  const pushed: string[][] = [];
  const pulled: [string, string[]][] = [];
  const outbox = queueOutbox({
    deliveryQueue: { send: async (bodies) => void pushed.push([...bodies]) },
    pullQueues: { send: async (id, bodies) => void pulled.push([id, [...bodies]]) },
  });
  return { outbox, pushed, pulled };
}

describe('the outbox (issue 29, item 3)', () => {
  it('ORD-3: a delayed push entry (an ordered lane’s settle message) is sent with its delay, apart from the undelayed ones', async () => {
    const sent: [string[], number | undefined][] = [];
    const outbox = queueOutbox({
      deliveryQueue: { send: async (bodies, delaySeconds) => void sent.push([[...bodies], delaySeconds]) },
      pullQueues: { send: async () => undefined },
    });
    const push = { id: 'push-1', delivery: 'push' } as const;
    await outbox.enqueueAll([
      { subscription: push, message: message('a') },
      { subscription: push, message: message('b'), delaySeconds: 2 },
      { subscription: push, message: message('c') },
    ]);
    expect(sent).toEqual([
      [[encodeDeliveryMessage(message('a')), encodeDeliveryMessage(message('c'))], undefined],
      [[encodeDeliveryMessage(message('b'))], 2],
    ]);
  });

  it('issue 29 item 3: a push subscription’s deliveries go to the deliveries queue, a pull subscription’s to its own, encoded', async () => {
    const { outbox, pushed, pulled } = recordingOutbox();
    await outbox.enqueue({ id: 'push-1', delivery: 'push' }, [message('push-1')]);
    await outbox.enqueue({ id: 'pull-1', delivery: 'pull' }, [message('pull-1')]);
    expect(pushed).toEqual([[encodeDeliveryMessage(message('push-1'))]]);
    expect(pulled).toEqual([['pull-1', [encodeDeliveryMessage(message('pull-1'))]]]);
  });

  it('issue 29 item 3: deliveries to many subscriptions are written one call per queue', async () => {
    const { outbox, pushed, pulled } = recordingOutbox();
    await outbox.enqueueAll([
      { subscription: { id: 'a', delivery: 'push' }, message: message('a') },
      { subscription: { id: 'p', delivery: 'pull' }, message: message('p') },
      { subscription: { id: 'b', delivery: 'push' }, message: message('b') },
    ]);
    expect(pushed.map((bodies) => bodies.map((body) => decodeDeliveryMessage(body).subscriptionId))).toEqual([
      ['a', 'b'],
    ]);
    expect(pulled.map(([id]) => id)).toEqual(['p']);
  });
});

describe('mayReceive and the delivery rules (issue 29, item 3)', () => {
  const event = new EventText(
    JSON.stringify({ specversion: '1.0', id: '1', source: 'urn:a', type: 'nl.edu.a.v1', subject: 'leerling-1' }),
  );
  const subscription = { owner: 'school', types: ['nl.edu.a.v1'], filters: [{ prefix: { subject: 'leerling-' } }] };

  it('EDU-7, EDU-8, issue 29 item 3: an entitled owner whose conditions the event meets receives it; else the reason', () => {
    expect(mayReceive(subscription, event, new Map([['school', [{ typePrefix: 'nl.edu.' }]]]))).toBe('receives');
    expect(mayReceive(subscription, event, new Map([['school', [{ typePrefix: 'nl.other.' }]]]))).toBe('not-entitled');
    expect(mayReceive(subscription, event, new Map())).toBe('not-entitled');
    expect(
      mayReceive(
        { ...subscription, filters: [{ prefix: { subject: 'klas-' } }] },
        event,
        new Map([['school', [{ typePrefix: '' }]]]),
      ),
    ).toBe('no-longer-matches');
  });

  it('EDU-11, JSON-3, issue 29 item 3: only batch mode with a target that declared batches takes batches', () => {
    expect(takesBatches({ contentMode: 'batch', batchSupported: true })).toBe(true);
    expect(takesBatches({ contentMode: 'batch', batchSupported: false })).toBe(false);
    expect(takesBatches({ contentMode: 'structured', batchSupported: true })).toBe(false);
  });
});

describe('decodeDelivery (issue 29, item 4)', () => {
  it('CE-13, issue 29 item 4: a large message decodes, without parsing its events whole, to what a small one does: events byte for byte, names, attributes', () => {
    const data = { rows: Array.from({ length: 60 }, (_, i) => ({ i, note: 'x "y" \\ z' })) };
    const events = [
      '{ "specversion":"1.0","id":"1","source":"urn:a","type":"t.v1","data":' + JSON.stringify(data) + ' }',
      '{"id":"2","source":"urn:a","type":"t.v1"}',
    ];
    const body = encodeDeliveryMessage({ ...message('s', events), correlationId: 'not a correlation id' });
    expect(body.length).toBeGreaterThan(2048);
    const decoded = decodeDelivery(body);
    expect(decoded.message).toEqual(message('s', events));
    expect(decoded.eventNames).toEqual([
      { source: 'urn:a', id: '1', type: 't.v1' },
      { source: 'urn:a', id: '2', type: 't.v1' },
    ]);
    expect(decoded.events.map((text) => text.json)).toEqual(events);
    expect(decoded.events[0]!.attributes).toEqual({ specversion: '1.0', id: '1', source: 'urn:a', type: 't.v1' });
  });

  it('issue 29 item 4: a large body that is not a delivery message is still refused', () => {
    const filler = 'x'.repeat(3000);
    for (const body of [
      JSON.stringify({ version: 1, deliveryId: 'k', subscriptionId: 's', createdAt: 1, events: [filler] }),
      JSON.stringify({ version: 2, deliveryId: 'k', subscriptionId: 's', createdAt: 1, events: [{ filler }] }),
      `{"version":1,"events":[{"a":"${filler}"}]`,
    ])
      expect(() => decodeDelivery(body)).toThrow();
  });
});
