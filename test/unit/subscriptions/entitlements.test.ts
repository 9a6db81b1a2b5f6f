import { describe, expect, it } from 'vitest';
import {
  checkEntitlement,
  EntitlementConfigError,
  entitledToEvent,
  parseEntitlements,
} from '../../../functions/core/subscriptions/entitlements.js';

const configuration = JSON.stringify({
  school: [
    { typePrefix: 'nl.edu.leerling.' },
    { typePrefix: 'nl.edu.rooster.', source: 'urn:nld:oin:1:systeem:rooster' },
  ],
  everything: [{ typePrefix: '' }],
  nothing: [],
  operator: [{ typePrefix: 'nl.edu.leerling.' }, { typePrefix: 'dev.koerier.' }],
});
// Parsed inside each test rather than once at load, so the parsing is part of what every test checks.
const config = () => parseEntitlements(configuration);

const entitled = (client: string, subscription: Parameters<typeof checkEntitlement>[1]) =>
  checkEntitlement(client, subscription, config()).entitled;

describe('entitlement to subscribe', () => {
  it('EDU-7: types within a granted prefix are entitled, others are not', () => {
    expect(entitled('school', { types: ['nl.edu.leerling.ingeschreven.v1', 'nl.edu.leerling.uitgeschreven.v1'] })).toBe(
      true,
    );
    expect(entitled('school', { types: ['nl.edu.leerling.ingeschreven.v1', 'nl.edu.cijfer.gegeven.v1'] })).toBe(false);
  });

  it('EDU-7: exact and prefix filters on type bound the types, also inside all and across every branch of any', () => {
    expect(entitled('school', { filters: [{ prefix: { type: 'nl.edu.leerling.' } }] })).toBe(true);
    expect(entitled('school', { filters: [{ prefix: { type: 'nl.edu.' } }] })).toBe(false);
    expect(
      entitled('school', {
        filters: [{ all: [{ suffix: { type: '.v1' } }, { exact: { type: 'nl.edu.leerling.x.v1' } }] }],
      }),
    ).toBe(true);
    expect(
      entitled('school', {
        filters: [{ any: [{ exact: { type: 'nl.edu.leerling.x' } }, { prefix: { type: 'nl.edu.leerling.y' } }] }],
      }),
    ).toBe(true);
    expect(
      entitled('school', {
        filters: [{ any: [{ exact: { type: 'nl.edu.leerling.x' } }, { suffix: { type: '.v1' } }] }],
      }),
    ).toBe(false);
  });

  it('EDU-7: a subscription whose types are unbounded needs a grant of every type', () => {
    expect(entitled('school', {})).toBe(false);
    expect(entitled('school', { filters: [{ not: { prefix: { type: 'nl.gov.' } } }] })).toBe(false);
    expect(entitled('everything', {})).toBe(true);
  });

  it('EDU-7: a grant limited to a source covers only subscriptions limited to that source', () => {
    expect(entitled('school', { types: ['nl.edu.rooster.gewijzigd.v1'] })).toBe(false);
    expect(
      entitled('school', { types: ['nl.edu.rooster.gewijzigd.v1'], source: 'urn:nld:oin:1:systeem:rooster' }),
    ).toBe(true);
    expect(
      entitled('school', {
        types: ['nl.edu.rooster.gewijzigd.v1'],
        filters: [{ exact: { source: 'urn:nld:oin:1:systeem:rooster' } }],
      }),
    ).toBe(true);
    expect(
      entitled('school', { types: ['nl.edu.rooster.gewijzigd.v1'], source: 'urn:nld:oin:2:systeem:rooster' }),
    ).toBe(false);
  });

  it('EDU-7: a client without grants may subscribe to nothing, and the refusal says what was asked', () => {
    expect(checkEntitlement('nothing', { types: ['a'] }, config())).toEqual({
      entitled: false,
      reason: expect.stringContaining('not entitled'),
    });
    expect(checkEntitlement('unknown', { types: ['a'] }, config()).entitled).toBe(false);
    const refusal = checkEntitlement('school', { types: ['nl.edu.cijfer.gegeven.v1'] }, config());
    expect(refusal).toEqual({ entitled: false, reason: expect.stringContaining('nl.edu.cijfer.gegeven.v1') });
  });

  it('EDU-7: at routing time each event is checked against the grants as they are now', () => {
    expect(entitledToEvent('school', { type: 'nl.edu.leerling.x.v1', source: 'urn:any' }, config())).toBe(true);
    expect(
      entitledToEvent('school', { type: 'nl.edu.rooster.x.v1', source: 'urn:nld:oin:1:systeem:rooster' }, config()),
    ).toBe(true);
    expect(
      entitledToEvent('school', { type: 'nl.edu.rooster.x.v1', source: 'urn:nld:oin:2:systeem:rooster' }, config()),
    ).toBe(false);
    expect(entitledToEvent('nothing', { type: 'nl.edu.leerling.x.v1', source: 'urn:any' }, config())).toBe(false);
  });

  it('EDU-7: malformed entitlement configuration is refused at start', () => {
    expect(() => parseEntitlements('{')).toThrow(EntitlementConfigError);
    expect(() => parseEntitlements('{"a": {"typePrefix": "x"}}')).toThrow(/must be a list/);
    expect(() => parseEntitlements('{"a": [{"source": "x"}]}')).toThrow(/typePrefix/);
  });

  it('EDU-7: configuration that is not an object of client id → list of grants is refused at start', () => {
    for (const json of ['[]', '[[{"typePrefix": ""}]]', 'null', '"x"', '5'])
      expect(() => parseEntitlements(json), json).toThrow(EntitlementConfigError);
    for (const grant of [
      'null',
      '5',
      '{"typePrefix": 5}',
      '{"typePrefix": "x", "source": ""}',
      '{"typePrefix": "x", "source": 5}',
    ]) {
      expect(() => parseEntitlements(`{"a": [${grant}]}`), grant).toThrow(EntitlementConfigError);
    }
  });

  it('EDU-7: a grant limited to a source stays limited to it after parsing', () => {
    const grants = parseEntitlements('{"a": [{"typePrefix": "x.", "source": "urn:s"}], "b": [{"typePrefix": "x."}]}');
    expect(grants.get('a')).toEqual([{ typePrefix: 'x.', source: 'urn:s' }]);
    expect(entitledToEvent('a', { type: 'x.y', source: 'urn:other' }, grants)).toBe(false);
    expect(grants.get('b')).toEqual([{ typePrefix: 'x.' }]);
  });

  it('EDU-7: an exact filter on type bounds the types to that one type, and one on source only does not bound them', () => {
    expect(entitled('school', { filters: [{ exact: { type: 'nl.edu.cijfer.gegeven.v1' } }] })).toBe(false);
    expect(entitled('school', { filters: [{ exact: { type: 'nl.edu.leerling.x.v1' } }] })).toBe(true);
    expect(entitled('school', { filters: [{ exact: { source: 'urn:nld:oin:1:systeem:rooster' } }] })).toBe(false);
    expect(entitled('everything', { filters: [{ exact: { source: 'urn:nld:oin:1:systeem:rooster' } }] })).toBe(true);
    expect(entitled('school', { filters: [{ prefix: { source: 'urn:' } }] })).toBe(false);
    expect(entitled('everything', { filters: [{ prefix: { source: 'urn:' } }] })).toBe(true);
  });

  it('EDU-7: an empty list of types bounds nothing, so it needs a grant of every type', () => {
    expect(entitled('school', { types: [] })).toBe(false);
    expect(entitled('everything', { types: [] })).toBe(true);
  });

  it('EDU-7: no grant of a non-empty prefix covers a subscription whose types are unbounded', () => {
    for (const typePrefix of ['n', 'S', 's', 'a', 'dev.koerier.']) {
      const grants = parseEntitlements(JSON.stringify({ c: [{ typePrefix }] }));
      expect(checkEntitlement('c', { filters: [{ suffix: { type: '.v1' } }] }, grants).entitled, typePrefix).toBe(
        false,
      );
    }
  });

  it('EDU-7: a source in an exact filter inside all limits the subscription to that source', () => {
    const types = ['nl.edu.rooster.gewijzigd.v1'];
    expect(
      entitled('school', {
        types,
        filters: [{ all: [{ suffix: { type: '.v1' } }, { exact: { source: 'urn:nld:oin:1:systeem:rooster' } }] }],
      }),
    ).toBe(true);
    expect(
      entitled('school', { types, filters: [{ all: [{ exact: { source: 'urn:nld:oin:2:systeem:rooster' } }] }] }),
    ).toBe(false);
    expect(
      entitled('school', {
        types,
        filters: [{ all: [{ suffix: { type: '.v1' } }] }, { exact: { source: 'urn:nld:oin:1:systeem:rooster' } }],
      }),
    ).toBe(true);
    // An exact filter on type alone says nothing about the source; a later one may still.
    expect(
      entitled('school', {
        filters: [{ exact: { type: types[0]! } }, { exact: { source: 'urn:nld:oin:1:systeem:rooster' } }],
      }),
    ).toBe(true);
  });

  it('EDU-7: a client unknown to the configuration has no grants, whatever the type is called', () => {
    // A missing client must read as an empty list of grants, never as some grant of an odd shape.
    expect(entitled('unknown', { types: ['undefined.x'] })).toBe(false);
    expect(entitledToEvent('unknown', { type: 'undefined.x', source: 'urn:any' }, config())).toBe(false);
    expect(
      entitledToEvent('unknown', { type: 'dev.koerier.subscription.suspended', source: 'urn:any' }, config()),
    ).toBe(false);
  });

  it('EDU-7, issue 28 item 14c: a type prefix covers whole segments only, as publish grants do: nl.example.case is not nl.example.caseworker', () => {
    const grants = parseEntitlements(
      JSON.stringify({ c: [{ typePrefix: 'nl.example.case' }], dotted: [{ typePrefix: 'nl.example.case.' }] }),
    );
    const event = (type: string) => ({ type, source: 'urn:any' });
    expect(entitledToEvent('c', event('nl.example.case'), grants)).toBe(true);
    expect(entitledToEvent('c', event('nl.example.case.opened.v1'), grants)).toBe(true);
    expect(entitledToEvent('c', event('nl.example.caseworker.secret'), grants)).toBe(false);
    expect(entitledToEvent('c', event('nl.example.cases'), grants)).toBe(false);
    // A prefix that ends with the separator is itself the boundary.
    expect(entitledToEvent('dotted', event('nl.example.case.opened.v1'), grants)).toBe(true);
    expect(entitledToEvent('dotted', event('nl.example.case'), grants)).toBe(false);
    expect(entitledToEvent('dotted', event('nl.example.caseworker.secret'), grants)).toBe(false);
    // Subscribing: exact types and prefix filters by the same rule; a prefix filter equal to an
    // undotted grant also matches nl.example.caseworker…, so only the dotted one is covered.
    const subscribe = (client: string, subscription: Parameters<typeof checkEntitlement>[1]) =>
      checkEntitlement(client, subscription, grants).entitled;
    expect(subscribe('c', { types: ['nl.example.case', 'nl.example.case.opened.v1'] })).toBe(true);
    expect(subscribe('c', { types: ['nl.example.caseworker.secret'] })).toBe(false);
    expect(subscribe('c', { filters: [{ prefix: { type: 'nl.example.case.' } }] })).toBe(true);
    expect(subscribe('c', { filters: [{ prefix: { type: 'nl.example.case.opened' } }] })).toBe(true);
    expect(subscribe('c', { filters: [{ prefix: { type: 'nl.example.case' } }] })).toBe(false);
    expect(subscribe('c', { filters: [{ prefix: { type: 'nl.example.casew' } }] })).toBe(false);
    expect(subscribe('dotted', { filters: [{ prefix: { type: 'nl.example.case.' } }] })).toBe(true);
    expect(subscribe('dotted', { types: ['nl.example.caseworker.secret'] })).toBe(false);
  });

  it('EDU-7, issue 28 item 14c: a grant within the operational namespace covers its own segments only', () => {
    const grants = parseEntitlements(JSON.stringify({ watcher: [{ typePrefix: 'dev.koerier.subscription' }] }));
    const about = (type: string) => ({ type, source: 'urn:any', attributes: { koeriersubscriber: 'someone-else' } });
    expect(entitledToEvent('watcher', about('dev.koerier.subscription.suspended'), grants)).toBe(true);
    expect(entitledToEvent('watcher', about('dev.koerier.subscriptions-secret.x'), grants)).toBe(false);
  });

  it('EDU-7: an operator with a grant of the operational namespace receives operational events about every subscription, next to its other grants', () => {
    const event = {
      type: 'dev.koerier.subscription.suspended',
      source: 'urn:any',
      attributes: { koeriersubscriber: 'someone-else' },
    };
    expect(entitledToEvent('operator', event, config())).toBe(true);
    expect(entitledToEvent('everything', event, config())).toBe(false);
  });
});
