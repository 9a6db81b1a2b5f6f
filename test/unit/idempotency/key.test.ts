import { describe, expect, it } from 'vitest';
import { readIdempotencyKey } from '../../../functions/core/idempotency/index.js';
import { refusalOf } from '../../support/refusals.js';
import { problemTypeUri } from '../../support/problem-types.js';

const V4 = '3f2b8c1e-9d4a-4b6e-8f10-2a7c5e9d1b34';

function problemOf(headers: Record<string, string>) {
  return refusalOf(() => readIdempotencyKey(headers)).problem;
}

describe('readIdempotencyKey', () => {
  it('EDU-IDEM-18: a missing key is a 400 idempotency-key-missing', () => {
    const p = problemOf({ 'content-type': 'application/json' });
    expect(p.status).toBe(400);
    expect(p.type).toBe(problemTypeUri('idempotency-key-missing'));
    expect(p.errors?.[0]).toMatchObject({ attribute: 'Idempotency-Key', rule: 'missing', requirement: 'EDU-IDEM-18' });
  });

  it('EDU-IDEM-18: an empty or blank key counts as missing', () => {
    expect(problemOf({ 'idempotency-key': '' }).type).toMatch(/idempotency-key-missing$/);
    expect(problemOf({ 'idempotency-key': '   ' }).type).toMatch(/idempotency-key-missing$/);
  });

  it.each([
    ['a word', 'retry-1'],
    ['a UUID without dashes', '3f2b8c1e9d4a4b6e8f102a7c5e9d1b34'],
    ['a braced UUID', `{${V4}}`],
    ['a URN', `urn:uuid:${V4}`],
    ['a UUID with a non-hex digit', '3f2b8c1e-9d4a-4b6e-8f10-2a7c5e9d1b3g'],
    ['two keys joined', `${V4}, ${V4}`],
  ])('EDU-IDEM-6: %s is a 400 idempotency-key-malformed (not a UUID)', (_what, value) => {
    const p = problemOf({ 'idempotency-key': value });
    expect(p.status).toBe(400);
    expect(p.type).toBe(problemTypeUri('idempotency-key-malformed'));
    expect(p.errors?.[0]).toMatchObject({ rule: 'uuid', requirement: 'EDU-IDEM-6' });
    expect(p.detail).toMatch(/not a UUID/);
  });

  it.each([
    ['version 1', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'],
    ['version 7', '01890a5d-ac96-774b-bcce-b302099a8057'],
    ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
    ['version 4 with the wrong variant', '3f2b8c1e-9d4a-4b6e-cf10-2a7c5e9d1b34'],
  ])('EDU-IDEM-6: %s is a 400 idempotency-key-malformed (not version 4)', (_what, value) => {
    const p = problemOf({ 'idempotency-key': value });
    expect(p.type).toBe(problemTypeUri('idempotency-key-malformed'));
    expect(p.errors?.[0]).toMatchObject({ rule: 'uuid-v4', requirement: 'EDU-IDEM-6' });
    expect(p.detail).toMatch(/not version 4/);
  });

  it('EDU-IDEM-6: an upper-case UUIDv4 is accepted and returned lower-cased', () => {
    expect(readIdempotencyKey({ 'idempotency-key': V4.toUpperCase() })).toBe(V4);
  });

  it('EDU-IDEM-6: the Structured Field String form ("…") of the IETF draft is accepted', () => {
    expect(readIdempotencyKey({ 'idempotency-key': `"${V4}"` })).toBe(V4);
    expect(problemOf({ 'idempotency-key': `"${V4}` }).type).toMatch(/idempotency-key-malformed$/);
  });
});
