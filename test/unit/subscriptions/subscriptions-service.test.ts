/**
 * The subscriptions use case without emulators: the in-memory store, a scripted handshake
 * transport typed against its port, a cipher that only wraps, and a clock the test moves. The
 * end-to-end tests (test/e2e/subscriptions-api.test.ts) prove the same rules through the laptop host.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import type { CredentialCipher } from '../../../functions/core/credentials/sink-credential.js';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import { withIdempotency } from '../../../functions/core/idempotency/index.js';
import { InMemoryIdempotencyStore } from '../../support/memory/memory-idempotency-store.js';
import { InMemorySubscriptionStore } from '../../support/memory/memory-subscription-store.js';
import { parseEntitlements } from '../../../functions/core/subscriptions/entitlements.js';
import {
  SubscriptionsService,
  type SubscriptionsSettings,
} from '../../../functions/core/subscriptions/subscriptions-service.js';
import { subscriptionsSettings } from './subscription-fixtures.js';
import type {
  ValidationTransport,
  ValidationTransportResult,
} from '../../../functions/core/webhooks/validation-handshake.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { answering } from '../../support/refusals.js';
import { problemTypeUri } from '../../support/problem-types.js';

const TYPE = 'nl.edu.leerling.ingeschreven.v1';
const START = Date.UTC(2026, 2, 1, 12);
const WINDOW_SECONDS = 3600;

const settings: SubscriptionsSettings = subscriptionsSettings({
  validationWindowSeconds: WINDOW_SECONDS,
  validationAgreedClients: ['school-b'],
});

const entitlements = parseEntitlements(
  JSON.stringify({
    'school-a': [{ typePrefix: 'nl.edu.' }],
    'school-b': [{ typePrefix: 'nl.edu.' }],
    'rooster-only': [{ typePrefix: 'nl.edu.rooster.', source: 'urn:nld:oin:1:systeem:rooster' }],
  }),
);

/** Wraps instead of encrypting, but keeps the contract that matters here: bound to its context. */
const cipher: CredentialCipher = {
  encrypt: async (plaintext, context) => Buffer.from(JSON.stringify({ context, plaintext })).toString('base64url'),
  decrypt: async (ciphertext, context) => {
    const sealed = JSON.parse(Buffer.from(ciphertext, 'base64url').toString('utf8')) as {
      context: unknown;
      plaintext: string;
    };
    if (JSON.stringify(sealed.context) !== JSON.stringify(context)) throw new Error('another context');
    return sealed.plaintext;
  },
};

const SECRET = 'target-client-secret-s3cr3t';
const clientCredentials = {
  credentialtype: 'CLIENTCREDENTIALS',
  tokenurl: 'https://idp.ontvanger.example/token',
  clientid: 'koerier',
  clientsecret: SECRET,
};
const consent = (rate = '120'): ValidationTransportResult => ({
  status: 200,
  headers: { 'webhook-allowed-origin': 'koerier.test', 'webhook-allowed-rate': rate },
});

let now: number;
let store: InMemorySubscriptionStore;
let answers: Record<string, () => ValidationTransportResult | Promise<ValidationTransportResult>>;
let sent: { url: string; headers: Readonly<Record<string, string>> }[];
let audited: Record<string, unknown>[];
let service: SubscriptionsService;

/** The handshake's port: the answer the sink's path is scripted to give, consent by default. */
const transport: ValidationTransport = async (request) => {
  sent.push(request);
  return (answers[new URL(request.url).pathname] ?? (() => consent()))();
};

beforeEach(() => {
  now = START;
  store = new InMemorySubscriptionStore(() => now);
  answers = {};
  sent = [];
  audited = [];
  service = answering(
    new SubscriptionsService({
      store,
      cipher,
      sendValidationRequest: transport,
      entitlements,
      settings,
      clock: () => now,
      audit: { ...silentLog, info: (_message, fields) => void audited.push(fields) },
    }),
  );
});

const principal = (clientId: string, ...extra: string[]): Principal => ({
  clientId,
  scopes: new Set(['subscriptions:manage', ...extra]),
});
const request = (
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
  query: Record<string, string> = {},
): HttpRequest => ({
  method,
  path: '/subscriptions',
  headers: {
    ...(body === undefined
      ? {}
      : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
    ...(method === 'GET' ? {} : { 'idempotency-key': randomUUID() }),
    ...headers,
  },
  query,
  routeKey: 'POST /subscriptions',
  pathParameters: {},
  body: Buffer.from(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body)),
});
const json = (response: HttpResponse) => JSON.parse(response.body.toString()) as Record<string, unknown>;
const create = (client: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  service.create(
    principal(client),
    request('POST', { types: [TYPE], sinkcredential: clientCredentials, ...body }, headers),
  );
const createdId = async (client: string, body: Record<string, unknown>) => {
  const response = await create(client, body);
  expect(response.status).toBe(201);
  return json(response)['id'] as string;
};
const patch = (client: Principal, id: string, body: unknown, headers: Record<string, string> = {}) =>
  service.update(client, id, request('PATCH', body, headers));
const callbackOf = (index = -1) => new URL(sent.at(index)!.headers['webhook-request-callback']!);
const approve = (id: string, token: string) => service.approve(id, request('GET', undefined, {}, { token }));

describe('subscriptions use case: create', () => {
  it('EDU-13, WH-4: a create asks the target first (origin, callback, rate), stores its consent, and answers 201 with Location and ETag', async () => {
    const response = await create('school-a', { sink: 'https://ontvanger.example/consents' });
    expect(response.status).toBe(201);
    const body = json(response);
    expect(body).toMatchObject({
      owner: 'school-a',
      sink: 'https://ontvanger.example/consents',
      status: 'active',
      allowedrate: 120,
      types: [TYPE],
    });
    expect(response.headers['location']).toBe(`/v1/subscriptions/${String(body['id'])}`);
    // Stored pending (version 1), then active with the target's answer (version 2).
    expect(response.headers['etag']).toBe('"2"');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('https://ontvanger.example/consents');
    expect(sent[0]!.headers).toMatchObject({ 'webhook-request-origin': 'koerier.test', 'webhook-request-rate': '60' });
    expect(callbackOf().href).toMatch(
      new RegExp(`^https://koerier\\.test/subscriptions/${String(body['id'])}/validation\\?token=[A-Za-z0-9_-]{43}$`),
    );
    expect((await store.get(String(body['id'])))?.status).toBe('active');
  });

  it('WH-5: a client allowed to agree out of band is active at once, and no validation request is sent', async () => {
    const response = await create('school-b', {
      sink: 'https://ontvanger.example/agreed',
      validation: 'agreed',
      batchsupported: true,
    });
    expect(response.status).toBe(201);
    expect(json(response)).toMatchObject({
      status: 'active',
      statusreason: 'consent agreed out of band (WH-5)',
      batchsupported: true,
    });
    expect(response.headers['etag']).toBe('"1"');
    expect(sent).toEqual([]);
  });

  it('WH-5: a client without an out-of-band agreement may not skip the handshake: 403, nothing stored, nobody asked', async () => {
    const response = await create('school-a', { sink: 'https://ontvanger.example/agreed', validation: 'agreed' });
    expect(response.status).toBe(403);
    expect(json(response)['type']).toMatch(/validation-agreement-not-allowed$/);
    expect((await store.listByOwner('school-a', { limit: 10 })).items).toEqual([]);
    expect(sent).toEqual([]);
  });

  it("EDU-7: a subscription beyond the owner's entitlement is refused 403 before anything is stored or sent", async () => {
    const response = await create('rooster-only', {
      sink: 'https://ontvanger.example/consents',
      source: 'urn:nld:oin:1:systeem:rooster',
    });
    expect(response.status).toBe(403);
    expect(json(response)['type']).toMatch(/subscription-not-entitled$/);
    expect((await store.listByOwner('rooster-only', { limit: 10 })).items).toEqual([]);
    expect(sent).toEqual([]);
  });

  it('EDU-IDEM-8: a create repeated with its key answers the subscription it made; with another body the key is refused 422', async () => {
    const key = randomUUID();
    const first = await create('school-a', { sink: 'https://ontvanger.example/consents' }, { 'idempotency-key': key });
    const again = await create('school-a', { sink: 'https://ontvanger.example/consents' }, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(json(again)['id']).toBe(json(first)['id']);
    const other = await create('school-a', { sink: 'https://ontvanger.example/other' }, { 'idempotency-key': key });
    expect(other.status).toBe(422);
    expect((await store.listByOwner('school-a', { limit: 10 })).items).toHaveLength(1);
    // The same key from another client is another subscription.
    expect(
      json(await create('school-b', { sink: 'https://ontvanger.example/consents' }, { 'idempotency-key': key }))['id'],
    ).not.toBe(json(first)['id']);
  });

  it('issue 12 #6, EDU-IDEM-8: signdeliveries is kept, shown, changed by PATCH, and part of what a create asked for (its key with the other value: 422)', async () => {
    const signing = answering(
      new SubscriptionsService({
        store,
        cipher,
        sendValidationRequest: transport,
        entitlements,
        settings: { ...settings, signingAvailable: true },
        clock: () => now,
      }),
    );
    const post = (body: Record<string, unknown>, key: string) =>
      signing.create(
        principal('school-a'),
        request('POST', { types: [TYPE], sinkcredential: clientCredentials, ...body }, { 'idempotency-key': key }),
      );
    const key = randomUUID();
    const first = await post({ sink: 'https://ontvanger.example/signed', signdeliveries: true }, key);
    expect(first.status).toBe(201);
    const id = json(first)['id'] as string;
    expect(json(first)['signdeliveries']).toBe(true);
    expect((await store.get(id))?.signDeliveries).toBe(true);
    expect((await post({ sink: 'https://ontvanger.example/signed', signdeliveries: true }, key)).status).toBe(201);
    expect((await post({ sink: 'https://ontvanger.example/signed' }, key)).status).toBe(422);
    const patched = await signing.update(principal('school-a'), id, request('PATCH', { signdeliveries: false }));
    expect(patched.status).toBe(200);
    expect(json(patched)['signdeliveries']).toBe(false);
    expect((await store.get(id))?.signDeliveries).toBeUndefined();
  });

  it('EDU-IDEM-3: behind the idempotency guard a repeated create is replayed, and the target is asked once', async () => {
    const idempotency = new InMemoryIdempotencyStore();
    const post = request('POST', {
      sink: 'https://ontvanger.example/consents',
      types: [TYPE],
      sinkcredential: clientCredentials,
    });
    const guarded = () =>
      withIdempotency(
        post,
        {
          clientId: 'school-a',
          operation: 'POST /subscriptions',
          store: idempotency,
          ttlSeconds: 3600,
          lockSeconds: 60,
          replayHeaders: ['etag'],
        },
        () => service.create(principal('school-a'), post),
      );
    const first = await guarded();
    const replay = await guarded();
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['etag']).toBe(first.headers['etag']);
    expect(replay.body).toBe(first.body);
    expect(sent).toHaveLength(1);
  });

  it('EDU-IDEM-18: a create without an Idempotency-Key is refused 400 and stores nothing', async () => {
    const response = await create(
      'school-a',
      { sink: 'https://ontvanger.example/consents' },
      { 'idempotency-key': '' },
    );
    expect(response.status).toBe(400);
    expect(json(response)['type']).toMatch(/idempotency-key-missing$/);
    expect((await store.listByOwner('school-a', { limit: 10 })).items).toEqual([]);
  });

  it('review #9: a body that is not JSON, of another media type or nested too deeply is refused before it is read further', async () => {
    const principalA = principal('school-a');
    expect((await service.create(principalA, request('POST', '{"sink":'))).status).toBe(400);
    expect((await service.create(principalA, request('POST', {}, { 'content-type': 'text/plain' }))).status).toBe(415);
    expect(json(await service.create(principalA, request('POST', '['.repeat(100) + ']'.repeat(100))))['type']).toMatch(
      /json-too-deep$/,
    );
  });
});

describe('subscriptions use case: the handshake and the callback', () => {
  it('WH-4: a refusal is stored as rejected; the callback approves it within the window, a wrong token is 404, and after the window 410', async () => {
    answers['/refuses'] = () => ({ status: 403, headers: {} });
    const first = await create('school-a', { sink: 'https://ontvanger.example/refuses' });
    expect(json(first)).toMatchObject({
      status: 'rejected',
      statusreason: expect.stringContaining('can still be approved through the callback'),
    });
    const id = String(json(first)['id']);
    const token = callbackOf().searchParams.get('token')!;

    expect((await approve(id, 'not-the-token')).status).toBe(404);
    expect((await store.get(id))?.status).toBe('rejected');
    now += (WINDOW_SECONDS - 1) * 1000;
    expect(json(await approve(id, token))).toEqual({ id, status: 'active' });
    expect((await store.get(id))?.status).toBe('active');
    // Repeating an approval is harmless.
    expect((await approve(id, token)).status).toBe(200);

    answers['/withholds'] = () => ({ status: 200, headers: {} });
    const late = String(json(await create('school-a', { sink: 'https://ontvanger.example/withholds' }))['id']);
    const lateToken = callbackOf().searchParams.get('token')!;
    now += (WINDOW_SECONDS + 1) * 1000;
    expect(json(await service.read(principal('school-a'), late))).toMatchObject({
      status: 'rejected',
      statusreason: expect.stringContaining('no consent before'),
    });
    expect((await approve(late, lateToken)).status).toBe(410);
  });

  it('WH-4: an approval through the callback while the OPTIONS answer is still out is kept, whatever that answer says', async () => {
    answers['/approves-meanwhile'] = async () => {
      const callback = callbackOf();
      const id = callback.pathname.split('/')[2]!;
      expect((await approve(id, callback.searchParams.get('token')!)).status).toBe(200);
      return { status: 503, headers: {} };
    };
    const response = await create('school-a', { sink: 'https://ontvanger.example/approves-meanwhile' });
    expect(json(response)).toMatchObject({
      status: 'active',
      statusreason: 'the target approved through the validation callback',
    });
  });

  it('WH-4: a subscription deleted while its validation request is out answers 404, not a subscription that no longer exists', async () => {
    answers['/deleted-meanwhile'] = async () => {
      const id = callbackOf().pathname.split('/')[2]!;
      expect((await service.remove(principal('school-a'), id)).status).toBe(200);
      return consent();
    };
    const response = await create('school-a', { sink: 'https://ontvanger.example/deleted-meanwhile' });
    expect(response.status).toBe(404);
    expect((await store.listByOwner('school-a', { limit: 10 })).items).toEqual([]);
  });
});

describe('subscriptions use case: list, read, change, delete', () => {
  it('EDU-13: the list pages through the own subscriptions, with the next page in the body and a Link header; a forged cursor and a bad limit are 400', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      now += 1000;
      ids.push(await createdId('school-a', { sink: `https://ontvanger.example/consents/${i}` }));
    }
    await createdId('school-b', { sink: 'https://ontvanger.example/consents' });
    const first = await service.list(principal('school-a'), request('GET', undefined, {}, { limit: '2' }));
    const page = json(first) as { subscriptions: { id: string }[]; next: string };
    expect(page.subscriptions.map((s) => s.id)).toEqual(ids.slice(0, 2));
    expect(first.headers['link']).toBe(`<${page.next}>; rel="next"`);
    const cursor = new URL(page.next, 'https://koerier.test').searchParams.get('cursor')!;
    const second = json(
      await service.list(principal('school-a'), request('GET', undefined, {}, { limit: '2', cursor })),
    );
    expect((second['subscriptions'] as { id: string }[]).map((s) => s.id)).toEqual(ids.slice(2));
    expect(second).not.toHaveProperty('next');

    expect(
      (await service.list(principal('school-b'), request('GET', undefined, {}, { limit: '2', cursor }))).status,
    ).toBe(400);
    expect(
      (await service.list(principal('school-a'), request('GET', undefined, {}, { cursor: 'forged' }))).status,
    ).toBe(400);
    for (const limit of ['0', '101', '2.5', 'ten'])
      expect((await service.list(principal('school-a'), request('GET', undefined, {}, { limit }))).status).toBe(400);
  });

  it('EDU-7: listing refuses a query parameter it does not take (400 naming it), instead of answering the unfiltered list', async () => {
    const refused = await service.list(principal('school-a'), request('GET', undefined, {}, { status: 'suspended' }));
    expect(refused.status).toBe(400);
    expect(json(refused)).toMatchObject({ type: problemTypeUri('invalid-parameter') });
    expect(json(refused)['detail']).toContain('status');
  });

  it('EDU-14: a read shows the subscription with its ETag, the credential only by type, and neither a secret nor the callback token', async () => {
    const id = await createdId('school-a', { sink: 'https://ontvanger.example/consents' });
    const read = await service.read(principal('school-a'), id);
    expect(read.status).toBe(200);
    expect(read.headers['etag']).toBe('"2"');
    expect(json(read)['sinkcredential']).toEqual({ credentialtype: 'CLIENTCREDENTIALS' });
    const token = callbackOf().searchParams.get('token')!;
    expect(read.body).not.toContain(SECRET);
    expect(read.body).not.toContain(token);
    expect(read.body).not.toContain((await store.get(id))!.validationTokenHash!);
    expect(JSON.stringify(audited)).not.toMatch(/consents|s3cr3t/);
    expect(audited[0]).toMatchObject({
      subscriptionId: id,
      owner: 'school-a',
      sinkOrigin: 'https://ontvanger.example',
    });
  });

  it("EDU-7: another client's subscription is 404 for read, PATCH and DELETE, as an unknown one is; an admin may act on it", async () => {
    const id = await createdId('school-a', { sink: 'https://ontvanger.example/consents' });
    const other = principal('school-b');
    expect((await service.read(other, id)).status).toBe(404);
    expect((await patch(other, id, { types: ['nl.edu.rooster.gewijzigd.v1'] })).status).toBe(404);
    expect((await service.remove(other, id)).status).toBe(404);
    expect((await service.read(other, randomUUID())).status).toBe(404);
    expect((await store.get(id))?.version).toBe(2);
    expect((await service.read(principal('admin-client', 'admin'), id)).status).toBe(200);
  });

  it("EDU-7: a PATCH that would widen a subscription beyond the owner's entitlement is 403, also when an admin makes it", async () => {
    const id = await createdId('rooster-only', {
      sink: 'https://ontvanger.example/consents',
      types: ['nl.edu.rooster.gewijzigd.v1'],
      source: 'urn:nld:oin:1:systeem:rooster',
    });
    expect((await patch(principal('rooster-only'), id, { types: [TYPE] })).status).toBe(403);
    expect((await patch(principal('admin-client', 'admin'), id, { source: null })).status).toBe(403);
    expect((await store.get(id))?.types).toEqual(['nl.edu.rooster.gewijzigd.v1']);
  });

  it('EDU-14: PATCH with If-Match changes the subscription at the current ETag; a stale ETag is 412 and changes nothing; `*` matches any', async () => {
    const id = await createdId('school-a', { sink: 'https://ontvanger.example/consents' });
    const changed = await patch(
      principal('school-a'),
      id,
      { types: ['nl.edu.leerling.uitgeschreven.v1'] },
      { 'if-match': '"2"' },
    );
    expect(changed.status).toBe(200);
    expect(changed.headers['etag']).toBe('"3"');
    const stale = await patch(principal('school-a'), id, { types: [TYPE] }, { 'if-match': '"2"' });
    expect(stale.status).toBe(412);
    expect(json(stale)['detail']).toBe('The subscription is at "3", not "2".');
    expect((await store.get(id))?.types).toEqual(['nl.edu.leerling.uitgeschreven.v1']);
    expect((await patch(principal('school-a'), id, { types: [TYPE] }, { 'if-match': '*' })).status).toBe(200);
  });

  it('EDU-14: PATCH is a JSON merge patch: named members change, null removes one, the others and the stored credential stay, and the same sink is not asked again', async () => {
    const id = await createdId('school-a', {
      sink: 'https://ontvanger.example/consents',
      source: 'urn:nld:oin:1:systeem:lvs',
      filters: [{ exact: { subject: 'leerling/42' } }],
    });
    const response = await patch(principal('school-a'), id, { filters: null, contentmode: 'binary' });
    expect(response.status).toBe(200);
    const body = json(response);
    expect(body).toMatchObject({
      source: 'urn:nld:oin:1:systeem:lvs',
      types: [TYPE],
      contentmode: 'binary',
      status: 'active',
      allowedrate: 120,
      sinkcredential: { credentialtype: 'CLIENTCREDENTIALS' },
    });
    expect(body).not.toHaveProperty('filters');
    expect((await store.get(id))?.credential?.kind).toBe('oauth2-client-credentials');
    expect(sent).toHaveLength(1);
    expect((await patch(principal('school-a'), id, [{ op: 'replace' }])).status).toBe(400);
  });

  it('WH-4: a PATCH to another sink asks the new target; without a new sinkcredential a move to another origin is refused', async () => {
    const id = await createdId('school-a', { sink: 'https://ontvanger.example/consents' });
    answers['/new-refuses'] = () => ({ status: 405, headers: {} });
    const moved = await patch(principal('school-a'), id, { sink: 'https://ontvanger.example/new-refuses' });
    expect(json(moved)).toMatchObject({ sink: 'https://ontvanger.example/new-refuses', status: 'rejected' });
    expect(sent.map((s) => s.url)).toEqual([
      'https://ontvanger.example/consents',
      'https://ontvanger.example/new-refuses',
    ]);

    const elsewhere = await patch(principal('school-a'), id, { sink: 'https://elders.example/consents' });
    expect(elsewhere.status).toBe(400);
    expect(JSON.stringify(json(elsewhere)['errors'])).toContain('required-for-new-origin');
    expect(sent).toHaveLength(2);
    const withCredential = await patch(principal('school-a'), id, {
      sink: 'https://elders.example/consents',
      sinkcredential: clientCredentials,
    });
    expect(json(withCredential)).toMatchObject({ sink: 'https://elders.example/consents', status: 'active' });
  });

  it('EDU-13: a delete answers the subscription as it was and removes it; a second delete is 404', async () => {
    const id = await createdId('school-a', { sink: 'https://ontvanger.example/consents' });
    const deleted = await service.remove(principal('school-a'), id);
    expect(deleted.status).toBe(200);
    expect(json(deleted)).toMatchObject({ id, status: 'active' });
    expect(await store.get(id)).toBeUndefined();
    expect((await service.remove(principal('school-a'), id)).status).toBe(404);
  });
});
