import { describe, expect, it } from 'vitest';
import { routeEntriesOf, routeKeysOf } from '../../../functions/core/routing/route-keys.js';

/**
 * Route keys are built from caller input (a subscription's source, types and exact filters; an
 * event's attributes). A JSON string may hold an unpaired surrogate ("\ud800"), on which
 * encodeURIComponent throws: that was a 500 (URIError: URI malformed) when a subscription with
 * such a source was created. Building a key must never throw.
 */
describe('review #1, fuzz: route keys from strings that are not well-formed Unicode', () => {
  it('review #1: a key is built from unpaired surrogates without throwing, the same on the subscription and the event side', () => {
    for (const source of ['\ud800', '\udfff\ud800', 'a\ud800b', 'x\udc00', '😀\ud83d', '\ud83d😀']) {
      const entries = routeEntriesOf({ source, types: ['nl.x.v1'] });
      expect(entries).toHaveLength(1);
      expect(routeKeysOf({ source, type: 'nl.x.v1' }, [entries[0]!.shape])).toEqual([entries[0]!.routeKey]);
    }
  });

  it('review #1: different unpaired surrogates, and a surrogate versus its literal escape text, give different keys', () => {
    const keyOf = (source: string) => routeEntriesOf({ source })[0]!.routeKey;
    const keys = ['\ud800', '\udc00', '\udbff', '%uD800', '%ud800', '\ufffd', 'a\ud800', '\ud800a', '\ud800\ud800'].map(
      keyOf,
    );
    expect(new Set(keys).size).toBe(keys.length);
    expect(keyOf('\ud800')).toBe('eq:source|%uD800');
    expect(keyOf('a\udc00😀')).toBe(`eq:source|a%uDC00${encodeURIComponent('😀')}`);
  });

  it('review #1: well-formed values keep the keys they had before (stored route index items stay valid)', () => {
    expect(routeEntriesOf({ source: 'urn:nld:oin:1:systeem:café|x 😀' })[0]!.routeKey).toBe(
      `eq:source|${encodeURIComponent('urn:nld:oin:1:systeem:café|x 😀')}`,
    );
  });
});
