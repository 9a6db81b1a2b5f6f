import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import type { HttpRequest } from '../../../functions/core/http/messages.js';
import { MemoryPartnerStore } from '../../support/memory/memory-partner-store.js';
import type { PartnerSeed } from '../../../functions/core/partners/partner-directory.js';
import { PartnersAdmin } from '../../../functions/core/partners/partners-admin.js';
import { DirectoryTooLargeError, type PartnerStore } from '../../../functions/core/partners/ports.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { recordingLog } from '../../support/recording-log.js';
import { answering } from '../../support/refusals.js';

const admin: Principal = { clientId: 'ops', scopes: new Set(['admin']) };
const seed: PartnerSeed = { publishGrants: { 'school-a': ['urn:nld:oin:0001'] }, entitlements: new Map() };

function request(
  method: string,
  clientId: string,
  body: unknown = {},
  headers: Record<string, string> = {},
): HttpRequest {
  return {
    method,
    path: `/clients/${clientId}`,
    headers: { 'content-type': 'application/json', ...headers },
    query: {},
    routeKey: `${method} /clients/{clientId}`,
    pathParameters: { clientId },
    body: Buffer.from(JSON.stringify(body)),
  };
}

function setup(store: PartnerStore = new MemoryPartnerStore()) {
  let now = Date.parse('2026-11-23T18:00:00Z');
  const log = recordingLog();
  const api = answering(new PartnersAdmin({ store, seed, audit: log, clock: () => now }));
  return { store, api, log, advance: (ms: number) => (now += ms) };
}

async function clientIds(store: PartnerStore): Promise<string[]> {
  return (await store.load()).partners.map((p) => p.clientId).sort();
}

describe('the partners admin API: what it stores (issue 12)', () => {
  it('issue 12: GET /clients lists every partner, ordered by client id, in the view GET /clients/{id} gives', async () => {
    const { api } = setup();
    // Stored in the order created (seeded school-a, then c, then b): the list orders them.
    await api.put(admin, 'school-c', request('PUT', 'school-c', { publishGrants: ['urn:nld:oin:0003'] }));
    await api.put(
      admin,
      'school-b',
      request('PUT', 'school-b', { description: 'School B', publishGrants: ['urn:nld:oin:0002'] }),
    );
    const list = await api.list();
    expect(list.status).toBe(200);
    const { clients } = JSON.parse(list.body) as { clients: { clientId: string }[] };
    expect(clients.map((c) => c.clientId)).toEqual(['school-a', 'school-b', 'school-c']);
    expect(clients[1]).toEqual(JSON.parse((await api.read('school-b')).body));
  });

  it('issue 12: the description sent is kept and shown; a replace keeps createdAt and moves updatedAt', async () => {
    const { api, advance } = setup();
    const created = JSON.parse(
      (await api.put(admin, 'school-b', request('PUT', 'school-b', { description: 'School B, contact ict@b.example' })))
        .body,
    );
    expect(created).toMatchObject({
      description: 'School B, contact ict@b.example',
      createdAt: '2026-11-23T18:00:00.000Z',
      updatedBy: 'ops',
    });
    advance(60_000);
    const replaced = JSON.parse((await api.put(admin, 'school-b', request('PUT', 'school-b', {}))).body);
    expect(replaced).toMatchObject({
      createdAt: '2026-11-23T18:00:00.000Z',
      updatedAt: '2026-11-23T18:01:00.000Z',
      version: 2,
    });
    // A replace is the whole partner: a description left out is gone.
    expect(replaced).not.toHaveProperty('description');
  });

  it('issue 12: creating, replacing or deleting one partner leaves every other partner in the directory', async () => {
    const { api, store } = setup();
    await api.put(admin, 'school-b', request('PUT', 'school-b', { publishGrants: ['urn:nld:oin:0002'] }));
    expect(await clientIds(store)).toEqual(['school-a', 'school-b']);
    await api.put(admin, 'school-b', request('PUT', 'school-b', { publishGrants: ['urn:nld:oin:0002:x'] }));
    expect(await clientIds(store)).toEqual(['school-a', 'school-b']);
    expect((await api.remove(admin, 'school-b', request('DELETE', 'school-b'))).status).toBe(204);
    expect(await clientIds(store)).toEqual(['school-a']);
  });

  it('issue 12: deleting a client not in the directory is a 404 and changes nothing', async () => {
    const { api, store, log } = setup();
    const answer = await api.remove(admin, 'nobody', request('DELETE', 'nobody'));
    expect(answer.status).toBe(404);
    expect(await clientIds(store)).toEqual(['school-a']);
    expect(log.lines.filter((line) => line.message === 'client changed')).toEqual([]);
  });

  it('EDU-IN: a writer that read the directory before the seeding and an admin change cannot overwrite them', async () => {
    const { api, store } = setup();
    // Another function's read of the never-written directory, written back after the admin's change.
    const stale = await store.load();
    await api.put(admin, 'school-b', request('PUT', 'school-b', { publishGrants: ['urn:nld:oin:0002'] }));
    await expect(
      store.save({ ...stale, revision: stale.revision + 1, partners: [] }, stale.revision),
    ).rejects.toThrow();
    expect(await clientIds(store)).toEqual(['school-a', 'school-b']);
  });

  it('issue 12: a change that would not fit the directory is a 409 directory-full; another store failure is not a 409', async () => {
    const memory = new MemoryPartnerStore();
    let failure: Error | undefined;
    const failing: PartnerStore = {
      load: () => memory.load(),
      save: async (next, expected) => (failure ? Promise.reject(failure) : memory.save(next, expected)),
    };
    const { api } = setup(failing);
    await api.read('school-a');
    failure = new DirectoryTooLargeError('full');
    const full = await api.put(admin, 'school-b', request('PUT', 'school-b', {}));
    expect(full.status).toBe(409);
    expect(JSON.parse(full.body)).toMatchObject({ type: problemTypeUri('directory-full') });
    // An outage is the adapter's 5xx, not a conflict the admin is told to resolve.
    failure = new Error('store unavailable');
    await expect(api.put(admin, 'school-b', request('PUT', 'school-b', {}))).rejects.toThrow('store unavailable');
  });
});

describe('the partners admin API: overlapping publish grants (issue 12)', () => {
  it('EDU-IN: a grant overlapping another client is refused whatever the client ids, also one that sorts first as a number', async () => {
    const { api, store } = setup();
    // Object keys that read as integers come first, so this client is the first of the overlapping pair.
    const refused = await api.put(admin, '1234', request('PUT', '1234', { publishGrants: ['urn:nld:oin:0001:lvs'] }));
    expect(refused.status).toBe(409);
    expect(await clientIds(store)).toEqual(['school-a']);
  });

  it('EDU-IN: an overlap between two other clients, stored before the check, does not block a change to a third', async () => {
    const { api, store } = setup();
    await api.read('school-a');
    const state = await store.load();
    const old = { ...state.partners[0]!, clientId: 'school-z', publishGrants: ['urn:nld:oin:0001:old'] };
    await store.save({ ...state, revision: state.revision + 1, partners: [...state.partners, old] }, state.revision);
    expect(
      (await api.put(admin, 'school-b', request('PUT', 'school-b', { publishGrants: ['urn:nld:oin:0002'] }))).status,
    ).toBe(201);
  });
});

describe('the partners admin API: the audit line (issue 12)', () => {
  it('issue 12: each change is one audit line marked audit: true; a replace says replaced; a delete names no grants the client no longer holds', async () => {
    const { api, log } = setup();
    await api.put(admin, 'school-b', request('PUT', 'school-b', { publishGrants: ['urn:nld:oin:0002'] }));
    await api.put(admin, 'school-b', request('PUT', 'school-b', { publishGrants: ['urn:nld:oin:0002:x'] }));
    await api.remove(admin, 'school-b', request('DELETE', 'school-b'));
    const audit = log.lines.filter((line) => line.message === 'client changed').map((line) => line.fields);
    expect(audit).toEqual([
      expect.objectContaining({ audit: true, action: 'created', version: 1 }),
      expect.objectContaining({ audit: true, action: 'replaced', version: 2, publishGrants: ['urn:nld:oin:0002:x'] }),
      { audit: true, action: 'deleted', by: 'ops', at: '2026-11-23T18:00:00.000Z', clientId: 'school-b', version: 2 },
    ]);
  });
});
