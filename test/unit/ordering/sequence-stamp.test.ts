import { describe, expect, it } from 'vitest';
import type { Attributes } from '../../../functions/core/cloudevents/event-validation.js';
import { stampSequence } from '../../../functions/core/ordering/sequence-stamp.js';
import { formatSequence, orderingKeyOf, parseSequence } from '../../../functions/core/ordering/ordering-settings.js';

const event =
  '{"specversion":"1.0","id":"e1","source":"urn:s","type":"t","partitionkey":"leerling-7","data":{"a":"x"}}';

describe('the sequence Koerier stamps (issue 33 item 2)', () => {
  it('ORD-2: sequences are zero-padded, so comparing the text compares the numbers (CloudEvents sequence extension)', () => {
    expect(formatSequence(1)).toBe('0000000001');
    const texts = [1, 2, 9, 10, 11, 99, 100, 1000, 123456789].map(formatSequence);
    expect([...texts].sort()).toEqual(texts);
    expect(parseSequence(formatSequence(42))).toBe(42);
    expect(parseSequence('42')).toBeUndefined();
    expect(() => formatSequence(0)).toThrow(RangeError);
  });

  it('ORD-2: the stamp adds sequence and keeps every other byte of the event; a publisher’s own sequence is replaced', () => {
    const stamped = stampSequence(event, 7);
    expect(JSON.parse(stamped)).toEqual({ ...JSON.parse(event), sequence: '0000000007' });
    expect(stamped.endsWith(event.slice(1))).toBe(true);
    const own = '{"sequence": "a7" ,"specversion":"1.0","id":"e1"}';
    expect(stampSequence(own, 8)).toBe('{"sequence":"0000000008","specversion":"1.0","id":"e1"}');
    expect(JSON.parse(stampSequence('{"sequencetype":"Integer","sequence":"3","id":"e"}', 9))).toEqual({
      sequence: '0000000009',
      id: 'e',
    });
  });

  it('ORD-1: the key is the named attribute’s value; absent, null or empty: no key', () => {
    const attributes = JSON.parse(event) as Attributes;
    expect(orderingKeyOf(attributes, { key: 'partitionkey' })).toBe('leerling-7');
    expect(orderingKeyOf({ ...attributes, partitionkey: '' }, { key: 'partitionkey' })).toBeUndefined();
    expect(orderingKeyOf(attributes, { key: 'subject' })).toBeUndefined();
    expect(orderingKeyOf({ zaaknummer: 12 }, { key: 'zaaknummer' })).toBe('12');
  });
});
