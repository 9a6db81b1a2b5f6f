import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import type { HttpRequest } from '../../../functions/core/http/messages.js';
import { MemoryPartnerStore } from '../../support/memory/memory-partner-store.js';
import { PartnerDirectory, type PartnerSeed } from '../../../functions/core/partners/partner-directory.js';
import { PartnersAdmin } from '../../../functions/core/partners/partners-admin.js';
import { DirectoryChangedError, type PartnerStore } from '../../../functions/core/partners/ports.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { answering } from '../../support/refusals.js';
import { recordingLog } from '../../support/recording-log.js';
import { problemTypeUri } from '../../support/problem-types.js';

const admin: Principal = { clientId: 'ops', scopes: new Set(['admin']) };
const seed: PartnerSeed = {
  publishGrants: { 'school-a': ['urn:nld:oin:0001'] },
  entitlements: new Map([['school-a', [{ typePrefix: 'nl.edu.' }]]]),
};

function put(clientId: string, body: unknown, headers: Record<string, string> = {}): HttpRequest {
  return {
    method: 'PUT',
    path: `/clients/${clientId}`,
    headers: { 'content-type': 'application/json', ...headers },
    query: {},
    routeKey: 'PUT /clients/{clientId}',
    pathParameters: { clientId },
    body: Buffer.from(JSON.stringify(body)),
  };
}

function setup(refreshMs = 30_000) {
  const store = new MemoryPartnerStore();
  let now = Date.parse('2026-11-23T18:00:00Z');
  const clock = () => now;
  const log = recordingLog();
  const directory = new PartnerDirectory({ store, seed, refreshMs, clock, log: silentLog });
  const partnersAdmin = answering(new PartnersAdmin({ store, seed, audit: log, clock }));
  return { store, directory, admin: partnersAdmin, log, advance: (ms: number) => (now += ms) };
}

describe('the partner directory as the functions read it', () => {
  it('issue 12: a change reaches a function once its cached copy is older than the refresh interval, not before', async () => {
    const { store, directory, admin: api, advance } = setup(30_000);
    expect((await directory.current()).publishGrants['school-b']).toBeUndefined();
    expect((await api.put(admin, 'school-b', put('school-b', { publishGrants: ['urn:nld:oin:0002'] }))).status).toBe(
      201,
    );

    advance(29_999);
    expect((await directory.current()).publishGrants['school-b'], 'still the cached copy').toBeUndefined();
    const loadsBefore = store.loads;
    advance(1);
    expect((await directory.current()).publishGrants['school-b']).toEqual(['urn:nld:oin:0002']);
    expect(store.loads).toBe(loadsBefore + 1);
  });

  it('issue 12: the deploy-time configuration seeds an empty directory, and entitlements come with it', async () => {
    const { directory } = setup();
    const snapshot = await directory.current();
    expect(snapshot.publishGrants).toEqual({ 'school-a': ['urn:nld:oin:0001'] });
    expect(snapshot.entitlements.get('school-a')).toEqual([{ typePrefix: 'nl.edu.' }]);
  });

  it('issue 12: seeding never overwrites a partner changed through the API, and a changed configuration only adds clients the directory lacks', async () => {
    const { store, directory, admin: api, advance } = setup(1);
    await directory.current();
    expect(
      (await api.put(admin, 'school-a', put('school-a', { publishGrants: ['urn:nld:oin:0001:lvs'] }))).status,
    ).toBe(200);
    // Redeployed with one more client in the configuration.
    const newSeed: PartnerSeed = {
      publishGrants: { ...seed.publishGrants, 'school-c': ['urn:nld:oin:0003'] },
      entitlements: seed.entitlements,
    };
    const redeployed = () =>
      new PartnerDirectory({
        store,
        seed: newSeed,
        refreshMs: 1,
        clock: () => Date.parse('2026-11-23T19:00:00Z'),
        log: silentLog,
      });
    advance(10);
    expect((await redeployed().current()).publishGrants).toEqual({
      'school-a': ['urn:nld:oin:0001:lvs'],
      'school-c': ['urn:nld:oin:0003'],
    });
    // The same configuration seeds nothing again: a client deleted through the API stays deleted.
    const newAdmin = answering(new PartnersAdmin({ store, seed: newSeed, audit: silentLog }));
    expect((await newAdmin.remove(admin, 'school-c', put('school-c', {}))).status).toBe(204);
    expect((await redeployed().current()).publishGrants['school-c']).toBeUndefined();
  });
});

describe('the partners admin API (issue 12)', () => {
  it("EDU-IN: a grant overlapping another client's is refused with 409 and nothing changes", async () => {
    const { directory, admin: api, store } = setup();
    await directory.current();
    const refused = await api.put(admin, 'school-b', put('school-b', { publishGrants: ['urn:nld:oin:0001:lvs'] }));
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toMatchObject({ type: problemTypeUri('publish-grants-overlap') });
    expect(JSON.parse(refused.body).detail).toContain('"school-a" (grant "urn:nld:oin:0001")');
    expect((await store.load()).partners.map((p) => p.clientId)).toEqual(['school-a']);
    // `""` covers every source, so it overlaps every other client's grants.
    expect((await api.put(admin, 'school-b', put('school-b', { publishGrants: [''] }))).status).toBe(409);
    // Its own grants may cover each other.
    expect(
      (
        await api.put(
          admin,
          'school-a',
          put('school-a', { publishGrants: ['urn:nld:oin:0001', 'urn:nld:oin:0001:lvs'] }),
        )
      ).status,
    ).toBe(200);
  });

  it('issue 12: every change is audited with who, what and when', async () => {
    const { admin: api, log } = setup();
    await api.put(
      admin,
      'school-b',
      put('school-b', { publishGrants: ['urn:nld:oin:0002'], entitlements: [{ typePrefix: 'nl.edu.' }] }),
    );
    await api.remove(admin, 'school-b', put('school-b', {}));
    const audit = log.lines.filter((line) => line.message === 'client changed').map((line) => line.fields);
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'created',
        by: 'ops',
        at: '2026-11-23T18:00:00.000Z',
        clientId: 'school-b',
        publishGrants: ['urn:nld:oin:0002'],
        entitlements: [{ typePrefix: 'nl.edu.' }],
      }),
      expect.objectContaining({ action: 'deleted', by: 'ops', at: '2026-11-23T18:00:00.000Z', clientId: 'school-b' }),
    ]);
  });

  it('issue 12: optimistic locking: If-Match with a stale ETag is 412, If-None-Match: * does not replace, the ETag is the version', async () => {
    const { admin: api } = setup();
    const created = await api.put(admin, 'school-b', put('school-b', { publishGrants: ['urn:nld:oin:0002'] }));
    expect(created.headers['etag']).toBe('"1"');
    expect((await api.put(admin, 'school-b', put('school-b', {}, { 'if-none-match': '*' }))).status).toBe(412);
    const replaced = await api.put(admin, 'school-b', put('school-b', { publishGrants: [] }, { 'if-match': '"1"' }));
    expect(replaced.status).toBe(200);
    expect(replaced.headers['etag']).toBe('"2"');
    expect((await api.put(admin, 'school-b', put('school-b', {}, { 'if-match': '"1"' }))).status).toBe(412);
    expect((await api.remove(admin, 'school-b', put('school-b', {}, { 'if-match': '"1"' }))).status).toBe(412);
    expect((await api.read('school-b')).status).toBe(200);
  });

  it('EDU-IN: a change to the grants is stored only at the revision it was checked at: a concurrent change makes it a 409 to send again', async () => {
    const memory = new MemoryPartnerStore();
    // Another admin's change lands between this one's read and its write.
    const racing: PartnerStore = {
      load: () => memory.load(),
      save: async (next, expected) => {
        await memory.save({ revision: expected + 1, partners: [] }, expected);
        return memory.save(next, expected);
      },
    };
    const api = answering(
      new PartnersAdmin({ store: racing, seed: { publishGrants: {}, entitlements: new Map() }, audit: silentLog }),
    );
    const answer = await api.put(admin, 'school-b', put('school-b', { publishGrants: ['urn:x'] }));
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.body)).toMatchObject({ type: problemTypeUri('directory-changed') });
    await expect(memory.save({ revision: 1, partners: [] }, 0)).rejects.toBeInstanceOf(DirectoryChangedError);
  });

  it('EDU-7: entitlements are read by the rules of the configuration; a bad body is a 400 naming the problem', async () => {
    const { admin: api } = setup();
    const emptySource = await api.put(
      admin,
      'school-b',
      put('school-b', { entitlements: [{ typePrefix: 'nl.', source: '' }] }),
    );
    expect(emptySource.status).toBe(400);
    // The schema's refusal (issue 29 item 2): the member is named in errors[], as every body's is.
    expect(JSON.parse(emptySource.body).errors).toMatchObject([
      { attribute: 'entitlements[0].source', rule: 'length', pointer: '/entitlements/0/source' },
    ]);
    expect((await api.put(admin, 'school-b', put('school-b', { publishGrant: [] }))).status).toBe(400);
    expect((await api.put(admin, 'school-b', put('school-b', { publishGrants: 'urn:x' }))).status).toBe(400);
    expect((await api.put(admin, '', put('', {}))).status).toBe(400);
    expect((await api.read('nobody')).status).toBe(404);
  });
});

describe('seeding the partner directory from the deploy-time configuration (issue 12)', () => {
  function directoryOver(store: PartnerStore, config: PartnerSeed, log = recordingLog()) {
    return new PartnerDirectory({
      store,
      seed: config,
      refreshMs: 0,
      clock: () => Date.parse('2026-11-23T18:00:00Z'),
      log,
    });
  }

  it('issue 12: a configured client with only entitlements is seeded with no publish grants; one with only grants, with no entitlements', async () => {
    const config: PartnerSeed = {
      publishGrants: { publisher: ['urn:nld:oin:0001'] },
      entitlements: new Map([['subscriber', [{ typePrefix: 'nl.edu.' }]]]),
    };
    const snapshot = await directoryOver(new MemoryPartnerStore(), config).current();
    expect(snapshot.publishGrants).toEqual({ publisher: ['urn:nld:oin:0001'], subscriber: [] });
    expect(snapshot.entitlements.get('publisher')).toEqual([]);
  });

  it('EDU-IN: a configured client whose grants overlap a partner added through the API is not seeded; the operator log names it', async () => {
    const store = new MemoryPartnerStore();
    await answering(new PartnersAdmin({ store, seed, audit: silentLog })).put(
      admin,
      'school-b',
      put('school-b', { publishGrants: ['urn:nld:oin:0002'] }),
    );
    const log = recordingLog();
    const redeployed: PartnerSeed = {
      publishGrants: { ...seed.publishGrants, 'school-c': ['urn:nld:oin:0002:lvs'] },
      entitlements: seed.entitlements,
    };
    const snapshot = await directoryOver(store, redeployed, log).current();
    // The API's partner keeps its sources: seeding it would let either publish the other's events.
    expect(Object.keys(snapshot.publishGrants).sort()).toEqual(['school-a', 'school-b']);
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: 'error', fields: expect.objectContaining({ clientId: 'school-c' }) }),
    );
  });

  it('issue 12: a function that loses the seeding race to another uses the directory as the other stored it; a store failure is not hidden', async () => {
    const memory = new MemoryPartnerStore();
    let failure: Error | undefined = undefined;
    // Another function seeds (here: with another configuration) between this one's read and its write.
    const racing: PartnerStore = {
      load: () => memory.load(),
      save: async (next, expected) => {
        if (failure) throw failure;
        await memory.save({ revision: expected + 1, seed: 'other', partners: [] }, expected);
        return memory.save(next, expected);
      },
    };
    expect((await directoryOver(racing, seed).current()).publishGrants).toEqual({});
    failure = new Error('store unavailable');
    await expect(directoryOver(racing, seed).current()).rejects.toThrow('store unavailable');
  });

  it('issue 12: a deploy that swaps one configured client for another seeds the new one', async () => {
    const store = new MemoryPartnerStore();
    await directoryOver(store, seed).current();
    const swapped: PartnerSeed = { publishGrants: { 'school-c': ['urn:nld:oin:0003'] }, entitlements: new Map() };
    expect((await directoryOver(store, swapped).current()).publishGrants).toEqual({
      'school-a': ['urn:nld:oin:0001'],
      'school-c': ['urn:nld:oin:0003'],
    });
  });

  it('issue 12: a client deleted through the API stays deleted under the same configuration written in another order, and comes back when its entitlements change', async () => {
    const store = new MemoryPartnerStore();
    const config: PartnerSeed = {
      publishGrants: { 'school-a': ['urn:nld:oin:0001'], 'school-c': ['urn:nld:oin:0003'] },
      entitlements: new Map([['school-c', [{ typePrefix: 'nl.edu.' }]]]),
    };
    await directoryOver(store, config).current();
    await answering(new PartnersAdmin({ store, seed: config, audit: silentLog })).remove(
      admin,
      'school-c',
      put('school-c', {}),
    );
    const reordered: PartnerSeed = {
      publishGrants: { 'school-c': ['urn:nld:oin:0003'], 'school-a': ['urn:nld:oin:0001'] },
      entitlements: config.entitlements,
    };
    expect((await directoryOver(store, reordered).current()).publishGrants['school-c']).toBeUndefined();
    // A changed configuration seeds again, so the client the deploy still names is back.
    const widened: PartnerSeed = {
      publishGrants: config.publishGrants,
      entitlements: new Map([['school-c', [{ typePrefix: 'nl.' }]]]),
    };
    expect((await directoryOver(store, widened).current()).entitlements.get('school-c')).toEqual([
      { typePrefix: 'nl.' },
    ]);
  });
});
