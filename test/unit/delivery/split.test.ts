import { describe, expect, it } from 'vitest';
import type { DeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import { splitIntoSingleEvents } from '../../../functions/core/delivery/split.js';

const parent: DeliveryMessage = {
  version: 1,
  deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
  subscriptionId: 'sub-1',
  events: ['{"id":"a"}', '{"id":"b"}'],
  createdAt: 1_000,
  redriveOf: 'old',
};

describe('split', () => {
  it("JSON-3, EDU-IDEM-11, EDU-IDEM-12: one delivery per event, keys derived from the parent and the place, the parent's age and redrive link kept", () => {
    const children = splitIntoSingleEvents([parent]);
    expect(children.map((child) => child.events)).toEqual([['{"id":"a"}'], ['{"id":"b"}']]);
    expect(children.map((child) => child.deliveryId)).toEqual(
      splitIntoSingleEvents([parent]).map((child) => child.deliveryId),
    );
    expect(new Set(children.map((child) => child.deliveryId)).size).toBe(2);
    for (const child of children)
      expect(child).toMatchObject({ version: 1, subscriptionId: 'sub-1', createdAt: 1_000, redriveOf: 'old' });
    expect(splitIntoSingleEvents([{ ...parent, events: ['{"id":"b"}', '{"id":"a"}'] }])[0]!.deliveryId).not.toBe(
      children[0]!.deliveryId,
    );
    // The place counts: the same event twice in one batch is two deliveries, two keys.
    const twice = splitIntoSingleEvents([{ ...parent, events: ['{"id":"a"}', '{"id":"a"}'] }]);
    expect(twice[0]!.deliveryId).not.toBe(twice[1]!.deliveryId);
  });
});
