/**
 * Issue 8, item 1: every DynamoDB key built from what callers send stays within DynamoDB's
 * limits, stays readable (and unchanged from earlier versions) while it fits, and never lets two
 * different inputs share a key.
 */
import { describe, expect, it } from 'vitest';
import { boundedKey, boundReadableKey, DYNAMODB_LIMITS } from '../../../functions/core/ids/bounded-key.js';
import { routedEventKey } from '../../../functions/core/routing/routed-events.js';
import { routeEntriesOf, routeKeysOf } from '../../../functions/core/routing/route-keys.js';

const bytes = (text: string) => Buffer.byteLength(text);
/** The marker key as every version before the bound wrote it. */
const legacyRoutedKey = (source: string, id: string) => ['routed', source, id].map(encodeURIComponent).join('#');

describe('bounded DynamoDB keys', () => {
  it('review #1: a routing marker key that fits is the one earlier versions wrote, up to exactly 2,048 bytes', () => {
    const source = 'urn:nld:oin:00000001234567890000:systeem:lvs';
    expect(routedEventKey({ source, id: 'e-1' })).toBe(legacyRoutedKey(source, 'e-1'));
    // Exactly at the limit: still readable.
    const id = 'x'.repeat(DYNAMODB_LIMITS.partitionKeyBytes - bytes(legacyRoutedKey(source, '')));
    expect(bytes(legacyRoutedKey(source, id))).toBe(2048);
    expect(routedEventKey({ source, id })).toBe(legacyRoutedKey(source, id));
    // One byte more: hashed.
    expect(routedEventKey({ source, id: `${id}x` })).toMatch(/^routed#sha256=[A-Za-z0-9_-]{43}$/);
  });

  it('review #1: a 4 KB source + id, in any script, gives a marker key within the partition-key limit', () => {
    for (const source of ['urn:' + 'a'.repeat(4000), 'urn:' + 'é'.repeat(2000), 'urn:' + '😀'.repeat(1000)]) {
      const key = routedEventKey({ source, id: 'x'.repeat(100) });
      expect(bytes(key)).toBeLessThanOrEqual(DYNAMODB_LIMITS.partitionKeyBytes);
      expect(key).toMatch(/^routed#sha256=/);
    }
  });

  it('review #1: different events never share a marker key, also where one key is hashed and the other is not', () => {
    const long = { source: 'urn:' + 'a'.repeat(3000), id: '1' };
    const hashed = routedEventKey(long);
    // An event whose source and id spell out the hashed key must not collide with it.
    const [, marker] = hashed.split('#') as [string, string];
    const lookalikes = [
      { source: marker.split('=')[0]!, id: marker.split('=')[1]! },
      { source: marker, id: '' },
      { source: 'sha256', id: marker.slice('sha256='.length) },
    ];
    for (const lookalike of lookalikes) expect(routedEventKey(lookalike)).not.toBe(hashed);
    expect(routedEventKey({ ...long, id: '2' })).not.toBe(hashed);
    // The separator cannot be forged: source "a#b" + id "c" is not source "a" + id "b#c".
    expect(routedEventKey({ source: 'a#b', id: 'c' })).not.toBe(routedEventKey({ source: 'a', id: 'b#c' }));
  });

  it('review #1: boundedKey and boundReadableKey agree, keep the namespace, and cap every key', () => {
    expect(boundedKey('rate', ['client', '60000'], 2048)).toBe('rate#client#60000');
    const plain = ['idempotency', 'c'.repeat(5000), 'POST /events', 'k'].map(encodeURIComponent).join('#');
    expect(boundReadableKey(plain, 2048)).toBe(
      boundedKey('idempotency', ['c'.repeat(5000), 'POST /events', 'k'], 2048),
    );
    expect(boundReadableKey(plain, 2048)).toMatch(/^idempotency#sha256=[A-Za-z0-9_-]{43}$/);
    expect(boundReadableKey('x'.repeat(5000), 1024)).toMatch(/^key#sha256=/);
  });

  it('review #1, EDU-8: route keys of a 3 KB type or source fit a key, and a subscription and an event derive the same one', () => {
    const type = '€'.repeat(1024); // 1,024 characters, 3,072 bytes: the longest type a subscription may name
    const source = 'urn:' + 'ö'.repeat(1020);
    const subscription = { source, types: [type], filters: [{ prefix: { subject: 'leerling/' } }] };
    const entries = routeEntriesOf(subscription);
    for (const entry of entries) expect(bytes(entry.routeKey)).toBeLessThanOrEqual(512 + 64);
    const eventKeys = routeKeysOf(
      { type, source, subject: 'leerling/42' },
      entries.map((entry) => entry.shape),
    );
    expect(eventKeys).toEqual(expect.arrayContaining(entries.map((entry) => entry.routeKey)));
    // A type one character off gets another key.
    expect(
      routeKeysOf(
        { type: `${type}x`, source, subject: 'leerling/42' },
        entries.map((entry) => entry.shape),
      ),
    ).not.toEqual(expect.arrayContaining(entries.map((e) => e.routeKey)));
    // A prefix filter anchored on a 3 KB type: the event's anchor hashes the same way.
    const anchor = `nl.${'ü'.repeat(1000)}.`;
    const byPrefix = routeEntriesOf({ filters: [{ prefix: { type: anchor } }] });
    const keys = routeKeysOf(
      { type: `${anchor}aangemaakt`, source: 'urn:x' },
      byPrefix.map((entry) => entry.shape),
    );
    expect(keys).toEqual(expect.arrayContaining(byPrefix.map((entry) => entry.routeKey)));
    for (const key of keys) expect(bytes(key)).toBeLessThanOrEqual(512 + 64);
  });
});
