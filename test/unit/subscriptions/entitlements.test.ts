import { describe, expect, it } from 'vitest';
import { checkEntitlement, EntitlementConfigError, entitledToEvent, parseEntitlements } from '../../../functions/core/subscriptions/entitlements.js';

const entitlements = parseEntitlements(
  JSON.stringify({
    school: [{ typePrefix: 'nl.edu.leerling.' }, { typePrefix: 'nl.edu.rooster.', source: 'urn:nld:oin:1:systeem:rooster' }],
    everything: [{ typePrefix: '' }],
    nothing: [],
  }),
);

const entitled = (client: string, subscription: Parameters<typeof checkEntitlement>[1]) => checkEntitlement(client, subscription, entitlements).entitled;

describe('entitlement to subscribe', () => {
  it('EDU-7: types within a granted prefix are entitled, others are not', () => {
    expect(entitled('school', { types: ['nl.edu.leerling.ingeschreven.v1', 'nl.edu.leerling.uitgeschreven.v1'] })).toBe(true);
    expect(entitled('school', { types: ['nl.edu.leerling.ingeschreven.v1', 'nl.edu.cijfer.gegeven.v1'] })).toBe(false);
  });

  it('EDU-7: exact and prefix filters on type bound the types, also inside all and across every branch of any', () => {
    expect(entitled('school', { filters: [{ prefix: { type: 'nl.edu.leerling.' } }] })).toBe(true);
    expect(entitled('school', { filters: [{ prefix: { type: 'nl.edu.' } }] })).toBe(false);
    expect(entitled('school', { filters: [{ all: [{ suffix: { type: '.v1' } }, { exact: { type: 'nl.edu.leerling.x.v1' } }] }] })).toBe(true);
    expect(entitled('school', { filters: [{ any: [{ exact: { type: 'nl.edu.leerling.x' } }, { prefix: { type: 'nl.edu.leerling.y' } }] }] })).toBe(true);
    expect(entitled('school', { filters: [{ any: [{ exact: { type: 'nl.edu.leerling.x' } }, { suffix: { type: '.v1' } }] }] })).toBe(false);
  });

  it('EDU-7: a subscription whose types are unbounded needs a grant of every type', () => {
    expect(entitled('school', {})).toBe(false);
    expect(entitled('school', { filters: [{ not: { prefix: { type: 'nl.gov.' } } }] })).toBe(false);
    expect(entitled('everything', {})).toBe(true);
  });

  it('EDU-7: a grant limited to a source covers only subscriptions limited to that source', () => {
    expect(entitled('school', { types: ['nl.edu.rooster.gewijzigd.v1'] })).toBe(false);
    expect(entitled('school', { types: ['nl.edu.rooster.gewijzigd.v1'], source: 'urn:nld:oin:1:systeem:rooster' })).toBe(true);
    expect(entitled('school', { types: ['nl.edu.rooster.gewijzigd.v1'], filters: [{ exact: { source: 'urn:nld:oin:1:systeem:rooster' } }] })).toBe(true);
    expect(entitled('school', { types: ['nl.edu.rooster.gewijzigd.v1'], source: 'urn:nld:oin:2:systeem:rooster' })).toBe(false);
  });

  it('EDU-7: a client without grants may subscribe to nothing, and the refusal says what was asked', () => {
    expect(checkEntitlement('nothing', { types: ['a'] }, entitlements)).toEqual({ entitled: false, reason: expect.stringContaining('not entitled') });
    expect(checkEntitlement('unknown', { types: ['a'] }, entitlements).entitled).toBe(false);
    const refusal = checkEntitlement('school', { types: ['nl.edu.cijfer.gegeven.v1'] }, entitlements);
    expect(refusal).toEqual({ entitled: false, reason: expect.stringContaining('nl.edu.cijfer.gegeven.v1') });
  });

  it('EDU-7: at routing time each event is checked against the grants as they are now', () => {
    expect(entitledToEvent('school', { type: 'nl.edu.leerling.x.v1', source: 'urn:any' }, entitlements)).toBe(true);
    expect(entitledToEvent('school', { type: 'nl.edu.rooster.x.v1', source: 'urn:nld:oin:1:systeem:rooster' }, entitlements)).toBe(true);
    expect(entitledToEvent('school', { type: 'nl.edu.rooster.x.v1', source: 'urn:nld:oin:2:systeem:rooster' }, entitlements)).toBe(false);
    expect(entitledToEvent('nothing', { type: 'nl.edu.leerling.x.v1', source: 'urn:any' }, entitlements)).toBe(false);
  });

  it('EDU-7: malformed entitlement configuration is refused at start', () => {
    expect(() => parseEntitlements('{')).toThrow(EntitlementConfigError);
    expect(() => parseEntitlements('{"a": {"typePrefix": "x"}}')).toThrow(/must be a list/);
    expect(() => parseEntitlements('{"a": [{"source": "x"}]}')).toThrow(/typePrefix/);
  });
});
