import { describe, expect, it } from 'vitest';
import {
  grantCovers,
  overlappingGrants,
  parsePublishGrants,
  PublishGrantsError,
  ungrantedSources,
} from '../../../functions/core/auth/publish-grants.js';

const OIN = 'urn:nld:oin:00000001823288444000';

describe('publish grants match whole segments (review #15)', () => {
  it('review #15: a URN grant does not cover a longer number (urn:nld:oin:0001 does not cover urn:nld:oin:00012…)', () => {
    expect(grantCovers('urn:nld:oin:0001', 'urn:nld:oin:00012')).toBe(false);
    expect(grantCovers('urn:nld:oin:0001', 'urn:nld:oin:00012:systeem:lvs')).toBe(false);
    expect(grantCovers(OIN, `${OIN}0`)).toBe(false);
  });

  it('review #15: an exact match is always a match, whatever the grant ends with', () => {
    for (const grant of [
      'urn:nld:oin:0001',
      'urn:nld:oin:0001:',
      'https://school.example',
      'https://school.example/',
      '/scholen/a',
      'x',
      'urn',
    ]) {
      expect(grantCovers(grant, grant)).toBe(true);
    }
  });

  it('review #15: in a URN the boundary is ":" — after the grant, or as its last character', () => {
    expect(grantCovers('urn:nld:oin:0001', 'urn:nld:oin:0001:systeem:lvs')).toBe(true);
    expect(grantCovers('urn:nld:oin:0001:', 'urn:nld:oin:0001:systeem')).toBe(true);
    expect(grantCovers('urn:nld:oin:0001:sys', 'urn:nld:oin:0001:systeem')).toBe(false);
    // The grant with its separator names what is below it, not the bare name.
    expect(grantCovers('urn:nld:oin:0001:', 'urn:nld:oin:0001')).toBe(false);
    // "/" is no boundary inside a URN, and the scheme is recognised in any case.
    expect(grantCovers('urn:nld:oin:0001', 'urn:nld:oin:0001/lvs')).toBe(false);
    expect(grantCovers('URN:nld:oin:0001', 'URN:nld:oin:0001:lvs')).toBe(true);
    expect(grantCovers('urn:', 'urn:nld:oin:0001')).toBe(true);
  });

  it('review #15: in URLs and paths the boundary is "/" — a port, a longer host or a longer name is not covered', () => {
    expect(grantCovers('https://school.example', 'https://school.example/lvs')).toBe(true);
    expect(grantCovers('https://school.example/', 'https://school.example/lvs')).toBe(true);
    expect(grantCovers('https://school.example', 'https://school.example.evil/lvs')).toBe(false);
    expect(grantCovers('https://school.example', 'https://school.example:8443/lvs')).toBe(false);
    expect(grantCovers('/scholen/a', '/scholen/a/lvs')).toBe(true);
    expect(grantCovers('/scholen/a', '/scholen/ab')).toBe(false);
    expect(grantCovers('/', '/scholen/a')).toBe(true);
    // Without "urn:" a ":" is no boundary: `urn` alone is a path-like grant and covers no URN.
    expect(grantCovers('urn', 'urn:nld:oin:0001')).toBe(false);
  });

  it('review #15: "" covers every source; comparison is exact, so another case is another source', () => {
    expect(grantCovers('', 'anything/at:all')).toBe(true);
    expect(grantCovers('urn:nld:oin:0001', 'urn:nld:OIN:0001:lvs')).toBe(false);
  });

  it('EDU-IN, review #15: the ingest check refuses a source under a neighbour’s longer number, listing it by index', () => {
    const grants = { a: ['urn:nld:oin:0001'] };
    expect(ungrantedSources('a', ['urn:nld:oin:0001:lvs', 'urn:nld:oin:00012:lvs'], grants, true)).toEqual([
      expect.objectContaining({ index: 1, attribute: 'source', requirement: 'EDU-IN', rule: 'publish-grant' }),
    ]);
    expect(ungrantedSources('b', ['urn:nld:oin:0001:lvs'], grants, false)).toHaveLength(1);
    // Not from the object's prototype: "constructor" is no client with grants.
    expect(ungrantedSources('constructor', ['x'], grants, false)).toHaveLength(1);
  });
});

describe('overlapping grants of different clients are refused when loaded (review #15)', () => {
  const refused = (grants: Record<string, string[]>) => {
    try {
      parsePublishGrants(JSON.stringify(grants));
    } catch (error) {
      expect(error).toBeInstanceOf(PublishGrantsError);
      return (error as Error).message;
    }
    throw new Error('expected the grants to be refused');
  };

  it('review #15: a grant inside another client’s grant is refused, naming both clients and grants on one line', () => {
    const message = refused({ 'school-a': ['urn:nld:oin:0001'], 'school-b': ['urn:nld:oin:0001:lvs'] });
    expect(message).toContain('"school-a" (grant "urn:nld:oin:0001") and "school-b" (grant "urn:nld:oin:0001:lvs")');
    expect(message).not.toContain('\n');
  });

  it('review #15: the same grant twice, a separator-ended twin and the catch-all "" all overlap', () => {
    expect(refused({ a: ['urn:nld:oin:0001'], b: ['urn:nld:oin:0001'] })).toContain('"a"');
    expect(refused({ a: ['urn:nld:oin:0001:'], b: ['urn:nld:oin:0001'] })).toContain('"b"');
    expect(refused({ a: [''], b: ['https://school.example'] })).toContain('(grant "")');
    expect(refused({ a: ['https://school.example/'], b: ['https://school.example'] })).toContain('"a"');
  });

  it('review #15: neighbours that only share characters do not overlap, and one client may hold overlapping grants of its own', () => {
    const grants = {
      a: ['urn:nld:oin:0001', 'urn:nld:oin:0001:lvs', 'https://school.example'],
      b: ['urn:nld:oin:00012', 'https://school.example.org', 'https://school.example:8443'],
      c: ['/scholen/a'],
      d: ['/scholen/ab'],
    };
    expect(overlappingGrants(grants)).toEqual([]);
    expect(parsePublishGrants(JSON.stringify(grants))).toEqual(grants);
  });

  it('review #15: every overlapping pair is listed', () => {
    const overlaps = overlappingGrants({ a: ['urn:x:1'], b: ['urn:x:1:y'], c: ['urn:x:1:y:z'] });
    expect(overlaps.map(({ first, second }) => `${first.client}-${second.client}`)).toEqual(['a-b', 'a-c', 'b-c']);
  });
});

describe('the shape of the publish grants (EDU-IN)', () => {
  const refusal = (json: string) => {
    try {
      parsePublishGrants(json);
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('EDU-IN: grants that are not an object of clients (null, a number, a string, a list) are refused as grants, never read as "nobody"', () => {
    // A list or a number would otherwise read as no clients at all, and null would fail as a TypeError the loaders do not expect.
    for (const json of ['null', '5', '"urn:nld:"', '[]', '[["urn:nld:"]]', 'true']) {
      expect(refusal(json), json).toBeInstanceOf(PublishGrantsError);
    }
  });

  it('EDU-IN: a client’s grants must be a list of strings; a bare string or a list with anything else is refused', () => {
    for (const grants of [
      { a: 'urn:nld:' },
      { a: ['urn:nld:oin:0001', 5] },
      { a: [null] },
      { a: [['urn:nld:']] },
      { a: ['x'], b: {} },
    ]) {
      expect(refusal(JSON.stringify(grants)), JSON.stringify(grants)).toBeInstanceOf(PublishGrantsError);
    }
    expect(parsePublishGrants('{"a":[],"b":["urn:nld:oin:0001"]}')).toEqual({ a: [], b: ['urn:nld:oin:0001'] });
  });

  it('EDU-IN: a grant is a URN only when it starts with "urn:"; one that merely holds "urn:" further on keeps "/" as its boundary', () => {
    expect(grantCovers('https://school.example/urn:a', 'https://school.example/urn:a/lvs')).toBe(true);
    expect(grantCovers('https://school.example/urn:a', 'https://school.example/urn:a:lvs')).toBe(false);
    expect(grantCovers('/bronnen/urn:x', '/bronnen/urn:x:y')).toBe(false);
  });
});
