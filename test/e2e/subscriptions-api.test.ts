import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbRouteIndex } from '../../functions/aws/dynamodb-route-index.js';
import { DynamoDbSubscriptionStore } from '../../functions/aws/dynamodb-subscription-store.js';
import { settingEnv } from '../../functions/config.js';
import { scopeKey } from '../../functions/core/idempotency/index.js';
import { logger } from '../../functions/app/logger.js';
import { resourceEnv, tables, type TableName } from '../../functions/config/resources.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { eventually, staysQuiet } from '../support/waiting.js';

/** A real webhook target: each path answers Koerier's OPTIONS request its own way. */
const behaviours: Record<string, (res: ServerResponse, origin: string, headers: IncomingHttpHeaders) => void> = {
  '/consents': (res, origin) =>
    res
      .writeHead(200, { 'webhook-allowed-origin': origin, 'webhook-allowed-rate': '120', allow: 'POST, OPTIONS' })
      .end(),
  '/takes-batches': (res, origin) =>
    res
      .writeHead(200, {
        'webhook-allowed-origin': origin,
        allow: 'POST, OPTIONS',
        'accept-post': 'application/cloudevents+json, application/cloudevents-batch+json',
      })
      .end(),
  // Refuses the first validation request, consents to every later one (its administrator changed their mind).
  '/changes-mind': (res, origin) =>
    optionsTo('/changes-mind').length === 1
      ? res.writeHead(403).end()
      : res.writeHead(200, { 'webhook-allowed-origin': origin }).end(),
  // Answers without consent: its administrator approves later, through whichever callback is current.
  '/approves-later-once': (res) => res.writeHead(200, { allow: 'POST, OPTIONS' }).end(),
  '/refuses': (res) => res.writeHead(403).end(),
  '/no-handshake': (res) => res.writeHead(405, { allow: 'POST' }).end(),
  // Withholds the consent headers and approves later through the callback (spec section 4.2).
  '/approves-later': (res) => res.writeHead(200, { allow: 'POST, OPTIONS' }).end(),
  '/ignores': () => undefined,
  // Its subscriber deletes the subscription while the target still considers the request, then it consents.
  '/deleted-meanwhile': (res, origin, headers) => {
    const id = /\/subscriptions\/([^/]+)\/validation/.exec(String(headers['webhook-request-callback']))![1]!;
    void call('school-a', 'DELETE', `/subscriptions/${id}`).then(() =>
      res.writeHead(200, { 'webhook-allowed-origin': origin }).end(),
    );
  },
};

const TYPE = 'nl.edu.leerling.ingeschreven.v1';
const VALIDATION_WINDOW_SECONDS = 4;
const SECRETS = ['static-bearer-token-s3cr3t', 'oauth-client-secret-s3cr3t'];

let koerier: TestHost;
let target: Server;
let targetUrl: string;
const received: { method: string; path: string; headers: IncomingHttpHeaders; body: string }[] = [];
/** Every response body and header this file sees, and every log line: none may hold a secret. */
const seen: string[] = [];
const logLines: string[] = [];
let restoreLogger: () => void;
const tokens: Record<string, string> = {};
/** The client whose `call`s hold the `admin` scope (next to `subscriptions:manage`). */
const ADMIN = 'admin-client';
let dynamodb: DynamoDBClient;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(
  client: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const token = client
    ? (tokens[client] ??= await koerier.host.issueToken(
        client,
        client === ADMIN ? ['subscriptions:manage', 'admin'] : ['subscriptions:manage'],
      ))
    : undefined;
  const answer = await callApi(koerier.url, token, method, path, body, {
    ...(body !== undefined && method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}),
    ...headers,
  });
  seen.push(answer.text, JSON.stringify([...answer.headers]));
  return answer;
}

/** Client credentials at the target's own token endpoint (WH-3: every push subscription has a credential). */
const clientCredentials = (clientsecret = 'target-client-secret') => ({
  credentialtype: 'CLIENTCREDENTIALS',
  tokenurl: `${targetUrl}/oauth/token`,
  clientid: 'koerier',
  clientsecret,
});
const subscribe = (client: string, body: Record<string, unknown>) =>
  call(client, 'POST', '/subscriptions', { types: [TYPE], sinkcredential: clientCredentials(), ...body });
const tableName = (name: TableName) => koerier.host.emulators.resourceEnvironment[resourceEnv.table(name)]!;
const optionsTo = (path: string) => received.filter((r) => r.method === 'OPTIONS' && r.path === path);

/** The subscriber's target: records every request, answers handshakes as told, welcomes deliveries. */
async function answerAsTarget(req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  received.push({
    method: req.method ?? '',
    path: req.url ?? '',
    headers: req.headers,
    body: Buffer.concat(chunks).toString('utf8'),
  });
  const behaviour = behaviours[new URL(req.url ?? '/', 'http://target').pathname];
  // The target is its own OAuth2 authorization server: any client gets a token.
  if (req.method === 'POST' && req.url === '/oauth/token') {
    return res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: 'target-access-token', token_type: 'Bearer', expires_in: 3600 }));
  }
  if (req.method === 'OPTIONS' && behaviour)
    return behaviour(res, String(req.headers['webhook-request-origin'] ?? ''), req.headers);
  // Deliveries are welcome everywhere.
  res.writeHead(req.method === 'POST' ? 204 : 404).end();
}

beforeAll(async () => {
  // Node's server does not wait for a handler's promise. A rejection stays unhandled, which
  // vitest reports as a failed run, so nothing is lost by not awaiting it here.
  target = createServer((req, res) => void answerAsTarget(req, res));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  restoreLogger = logger.captureTo((line) => logLines.push(line));
  koerier = await startTestHost({
    [settingEnv.entitlements]: JSON.stringify({
      'school-a': [{ typePrefix: 'nl.edu.' }],
      'school-b': [{ typePrefix: 'nl.edu.' }],
      'rooster-only': [{ typePrefix: 'nl.edu.rooster.', source: 'urn:nld:oin:1:systeem:rooster' }],
      // A prefix without a trailing dot: it covers nl.edu.case and its segments, not nl.edu.caseworker (issue 28 item 14c).
      'case-only': [{ typePrefix: 'nl.edu.case' }],
      [ADMIN]: [{ typePrefix: '' }],
    }),
    [settingEnv.validationAgreedClients]: 'school-b',
    [settingEnv.validationTimeoutSeconds]: '1',
    [settingEnv.validationWindowSeconds]: String(VALIDATION_WINDOW_SECONDS),
    [settingEnv.webhookRequestRate]: '60',
  });
  // The host's emulators: process.env carries their endpoints while it runs.
  dynamodb = new DynamoDBClient({});
});
afterAll(async () => {
  dynamodb?.destroy();
  restoreLogger?.();
  await koerier?.stop();
  target?.closeAllConnections();
  await new Promise((resolve) => target?.close(resolve));
});

describe('subscriptions API lifecycle', () => {
  it('EDU-13, EDU-14, EDU-IDEM-3, EDU-IDEM-14: create, replay, read, list, change, delete', async () => {
    const request = {
      sink: `${targetUrl}/consents`,
      types: [TYPE],
      filters: [{ exact: { subject: 'leerling/42' } }],
      sinkcredential: clientCredentials(),
    };
    const key = randomUUID();
    const created = await call('school-a', 'POST', '/subscriptions', request, { 'idempotency-key': key });
    expect(created.status).toBe(201);
    const id = created.body['id'] as string;
    expect(created.headers.get('location')).toBe(`/v1/subscriptions/${id}`);
    expect(created.body).toMatchObject({
      owner: 'school-a',
      sink: request.sink,
      types: [TYPE],
      filters: request.filters,
      status: 'active',
      contentmode: 'structured',
      delivery: 'push',
    });

    const replay = await call('school-a', 'POST', '/subscriptions', request, { 'idempotency-key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(created.body);
    expect((await call('school-a', 'POST', '/subscriptions', request, { 'idempotency-key': '' })).status).toBe(400);

    const read = await call('school-a', 'GET', `/subscriptions/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    const list = await call('school-a', 'GET', '/subscriptions');
    expect((list.body['subscriptions'] as { id: string }[]).map((s) => s.id)).toContain(id);

    const handshakes = optionsTo('/consents').length;
    const etag = read.headers.get('etag')!;
    const changed = await call(
      'school-a',
      'PATCH',
      `/subscriptions/${id}`,
      { types: ['nl.edu.leerling.uitgeschreven.v1'], filters: null },
      { 'if-match': etag },
    );
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ types: ['nl.edu.leerling.uitgeschreven.v1'], status: 'active' });
    expect(changed.body).not.toHaveProperty('filters');
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(optionsTo('/consents')).toHaveLength(handshakes); // same sink: no new handshake
    expect(
      (await call('school-a', 'PATCH', `/subscriptions/${id}`, { types: [TYPE] }, { 'if-match': etag })).status,
    ).toBe(412);

    const deleted = await call('school-a', 'DELETE', `/subscriptions/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id, types: ['nl.edu.leerling.uitgeschreven.v1'] });
    expect((await call('school-a', 'GET', `/subscriptions/${id}`)).status).toBe(404);
    const after = await call('school-a', 'GET', '/subscriptions');
    expect((after.body['subscriptions'] as { id: string }[]).map((s) => s.id)).not.toContain(id);
  });

  it('EDU-IDEM-3, EDU-IDEM-8: a create retried after its key was freed (a 5xx once the record was written) answers the subscription made, not a second one', async () => {
    const key = randomUUID();
    const request = {
      sink: `${targetUrl}/consents?retried=${key}`,
      types: [TYPE],
      sinkcredential: clientCredentials(),
    };
    const first = await call('school-a', 'POST', '/subscriptions', request, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    // What the guard does after a 5xx: the key is free again, the subscription stays.
    const freeKey = () =>
      dynamodb.send(
        new DeleteItemCommand({
          TableName: tableName('idempotency'),
          Key: {
            [tables.idempotency.partitionKey.name]: {
              S: scopeKey({ clientId: 'school-a', operation: 'POST /subscriptions', key }),
            },
          },
        }),
      );
    await freeKey();

    const retry = await call('school-a', 'POST', '/subscriptions', request, { 'idempotency-key': key });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.body['id']).toBe(first.body['id']);
    expect(retry.headers.get('location')).toBe(`/v1/subscriptions/${first.body['id']}`);
    const all = await call('school-a', 'GET', '/subscriptions?limit=100');
    expect((all.body['subscriptions'] as { sink: string }[]).filter((s) => s.sink === request.sink)).toHaveLength(1);

    // The same key with another request is not a retry.
    await freeKey();
    const other = await call(
      'school-a',
      'POST',
      '/subscriptions',
      { ...request, types: ['nl.edu.leerling.uitgeschreven.v1'] },
      { 'idempotency-key': key },
    );
    expect(other.status).toBe(422);
    expect((await call('school-a', 'GET', `/subscriptions/${first.body['id']}`)).body['types']).toEqual([TYPE]);
    // Another client's create with the same key is its own subscription.
    const theirs = await call('school-b', 'POST', '/subscriptions', request, { 'idempotency-key': key });
    expect(theirs.status).toBe(201);
    expect(theirs.body['id']).not.toBe(first.body['id']);
  });

  it('EDU-IDEM-5: DELETE without an Idempotency-Key is refused', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    expect(
      (await call('school-a', 'DELETE', `/subscriptions/${created.body['id']}`, undefined, { 'idempotency-key': '' }))
        .status,
    ).toBe(400);
    expect((await call('school-a', 'GET', `/subscriptions/${created.body['id']}`)).status).toBe(200);
  });

  it('EDU-IDEM-4: the operations beyond plain HTTP methods (pause, resume, redrive, a replay) need an Idempotency-Key too, and a repeat with it changes nothing twice', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    const id = created.body['id'] as string;
    const operations: [path: string, body: unknown][] = [
      [`/subscriptions/${id}/pause`, undefined],
      [`/subscriptions/${id}/resume`, undefined],
      [`/subscriptions/${id}/dead-letters/redrive`, { all: true }],
      [
        `/subscriptions/${id}/replays`,
        { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() },
      ],
    ];
    for (const [path, body] of operations) {
      const refused = await call('school-a', 'POST', path, body, { 'idempotency-key': '' });
      expect(refused.status, path).toBe(400);
      expect(refused.headers.get('content-type'), path).toBe('application/problem+json');
    }
    // Nothing was paused by the refused request; a pause repeated with its key is answered from the first.
    expect((await call('school-a', 'GET', `/subscriptions/${id}`)).body['status']).not.toBe('paused');
    const key = randomUUID();
    const paused = await call('school-a', 'POST', `/subscriptions/${id}/pause`, undefined, { 'idempotency-key': key });
    expect(paused.status).toBeLessThan(300);
    const again = await call('school-a', 'POST', `/subscriptions/${id}/pause`, undefined, { 'idempotency-key': key });
    expect(again.status).toBe(paused.status);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('EDU-14, CESQL-3, issue 32 item 3: an invalid subscription is refused with every error named; an invalid sql filter is one, with its position', async () => {
    const refused = await call('school-a', 'POST', '/subscriptions', {
      sink: 'ftp://x',
      types: [TYPE],
      filters: [{ sql: 'subject LIKE 5' }, { exact: { subject: '' } }],
    });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect((refused.body['errors'] as { attribute: string }[]).map((e) => e.attribute)).toEqual([
      'sink',
      'filters[0].sql',
      'filters[1].exact.subject',
      'sinkcredential',
    ]);
    expect((refused.body['errors'] as { message: string }[])[1]!.message).toBe(
      '"sql" is not a CESQL v1 expression at position 14: expected a string literal as the LIKE pattern, found "5"',
    );
  });

  it('EDU-14: the list is paginated and follows `next` to the end', async () => {
    for (let i = 0; i < 3; i++) await subscribe('school-b', { sink: `${targetUrl}/consents`, validation: 'agreed' });
    const ids: string[] = [];
    let path: string | undefined = '/subscriptions?limit=2';
    while (path) {
      const page: Answer = await call('school-b', 'GET', path);
      expect(page.status).toBe(200);
      const items = page.body['subscriptions'] as { id: string }[];
      expect(items.length).toBeLessThanOrEqual(2);
      ids.push(...items.map((s) => s.id));
      path = page.body['next'] as string | undefined;
    }
    expect(ids.length).toBeGreaterThanOrEqual(3);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('entitlement and isolation', () => {
  it("EDU-7: a subscription outside the client's entitlement is refused with 403; within it, accepted", async () => {
    const outside = await subscribe('rooster-only', {
      sink: `${targetUrl}/consents`,
      types: ['nl.edu.rooster.gewijzigd.v1'],
    });
    expect(outside.status).toBe(403);
    expect(outside.body).toMatchObject({ type: expect.stringContaining('subscription-not-entitled') });
    expect(
      (
        await subscribe('rooster-only', {
          sink: `${targetUrl}/consents`,
          types: [TYPE],
          source: 'urn:nld:oin:1:systeem:rooster',
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await subscribe('rooster-only', {
          sink: `${targetUrl}/consents`,
          types: ['nl.edu.rooster.gewijzigd.v1'],
          source: 'urn:nld:oin:1:systeem:rooster',
        })
      ).status,
    ).toBe(201);
    expect((await subscribe('no-grants-at-all', { sink: `${targetUrl}/consents` })).status).toBe(403);
  });

  it('EDU-7, issue 28 item 14c: a type prefix grant covers whole segments: nl.edu.case does not entitle nl.edu.caseworker', async () => {
    const sink = `${targetUrl}/consents`;
    const neighbour = await subscribe('case-only', { sink, types: ['nl.edu.caseworker.secret.v1'] });
    expect(neighbour.status).toBe(403);
    expect(neighbour.body).toMatchObject({ type: expect.stringContaining('subscription-not-entitled') });
    // A prefix filter equal to the grant would match nl.edu.caseworker… too; one ending on the boundary is covered.
    expect(
      (await subscribe('case-only', { sink, types: undefined, filters: [{ prefix: { type: 'nl.edu.case' } }] })).status,
    ).toBe(403);
    expect((await subscribe('case-only', { sink, types: ['nl.edu.case.geopend.v1'] })).status).toBe(201);
    expect(
      (await subscribe('case-only', { sink, types: undefined, filters: [{ prefix: { type: 'nl.edu.case.' } }] }))
        .status,
    ).toBe(201);
  });

  it('EDU-7: a PATCH that would leave the entitlement is refused, and the subscription is unchanged', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    const widened = await call('school-a', 'PATCH', `/subscriptions/${created.body['id']}`, { types: null });
    expect(widened.status).toBe(403);
    expect((await call('school-a', 'GET', `/subscriptions/${created.body['id']}`)).body['types']).toEqual([TYPE]);
  });

  it("EDU-7: another client's subscription answers 404 to GET, PATCH and DELETE, and is not in its list", async () => {
    const mine = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    const id = mine.body['id'] as string;
    expect((await call('school-b', 'GET', `/subscriptions/${id}`)).status).toBe(404);
    expect((await call('school-b', 'PATCH', `/subscriptions/${id}`, { types: ['nl.edu.x.v1'] })).status).toBe(404);
    expect((await call('school-b', 'DELETE', `/subscriptions/${id}`)).status).toBe(404);
    const theirs = await call('school-b', 'GET', '/subscriptions?limit=100');
    expect((theirs.body['subscriptions'] as { id: string }[]).map((s) => s.id)).not.toContain(id);
    expect(await call('school-a', 'GET', `/subscriptions/${id}`)).toMatchObject({
      status: 200,
      body: { types: [TYPE] },
    });
    // A client holding `admin` may act on any subscription.
    const adminToken = await koerier.host.issueToken('admin-client', ['subscriptions:manage', 'admin']);
    const asAdmin = await fetch(`${koerier.url}/subscriptions/${id}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    seen.push(await asAdmin.text());
    expect(asAdmin.status).toBe(200);
    // A token without the scope gets nothing at all.
    const publisherToken = await koerier.host.issueToken('school-a', ['events:publish']);
    const unscoped = await fetch(`${koerier.url}/subscriptions/${id}`, {
      headers: { authorization: `Bearer ${publisherToken}` },
    });
    expect(unscoped.status).toBe(403);
  });

  it('issue 12 item 8: an admin lists one client’s subscriptions, or every client’s (owner=*), page by page; a client without admin may name only itself', async () => {
    const ofA = (await subscribe('school-a', { sink: `${targetUrl}/consents` })).body['id'] as string;
    const ofB = (await subscribe('school-b', { sink: `${targetUrl}/consents`, validation: 'agreed' })).body[
      'id'
    ] as string;
    const pages = async (client: string, first: string) => {
      const ids: string[] = [];
      const owners = new Set<string>();
      for (let path: string | undefined = first; path;) {
        const page = await call(client, 'GET', path);
        expect(page.status, path).toBe(200);
        for (const s of page.body['subscriptions'] as { id: string; owner: string }[]) {
          ids.push(s.id);
          owners.add(s.owner);
        }
        path = page.body['next'] as string | undefined;
      }
      return { ids, owners };
    };
    const everyone = await pages(ADMIN, '/subscriptions?owner=*&limit=3');
    expect(everyone.ids).toEqual(expect.arrayContaining([ofA, ofB]));
    expect(new Set(everyone.ids).size).toBe(everyone.ids.length);
    const onlyA = await pages(ADMIN, '/subscriptions?owner=school-a&limit=3');
    expect(onlyA.ids).toContain(ofA);
    expect([...onlyA.owners]).toEqual(['school-a']);
    // What school-a itself sees is the same list.
    expect((await pages('school-a', '/subscriptions?limit=3')).ids).toEqual(onlyA.ids);
    expect((await pages('school-a', '/subscriptions?owner=school-a')).ids).toEqual(onlyA.ids);
    for (const owner of ['school-b', '*']) {
      const refused = await call('school-a', 'GET', `/subscriptions?owner=${encodeURIComponent(owner)}`);
      expect(refused.status, owner).toBe(403);
      expect(refused.body['detail']).toMatch(/needs the scope "admin"/);
    }
  });

  it("EDU-7, WH-5: an admin's PATCH is held to the owner's entitlement and out-of-band agreement, not the admin's own", async () => {
    const owned = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    // The admin may subscribe to every type; the owner, school-a, only to nl.edu.*.
    const widened = await call(ADMIN, 'PATCH', `/subscriptions/${owned.body['id']}`, { types: ['nl.other.x.v1'] });
    expect(widened.status).toBe(403);
    expect(widened.body['detail']).toContain('"school-a"');
    expect((await call('school-a', 'GET', `/subscriptions/${owned.body['id']}`)).body['types']).toEqual([TYPE]);

    // school-b may declare consent agreed out of band; the admin itself may not.
    const agreed = await subscribe('school-b', { sink: `${targetUrl}/consents`, validation: 'agreed' });
    const changed = await call(ADMIN, 'PATCH', `/subscriptions/${agreed.body['id']}`, {
      types: ['nl.edu.leerling.uitgeschreven.v1'],
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      owner: 'school-b',
      validation: 'agreed',
      status: 'active',
      types: ['nl.edu.leerling.uitgeschreven.v1'],
    });
  });

  it('WH-5: only clients the configuration names may declare consent agreed out of band; then no validation request is sent', async () => {
    expect((await subscribe('school-a', { sink: `${targetUrl}/consents`, validation: 'agreed' })).status).toBe(403);
    const before = optionsTo('/no-handshake').length;
    const agreed = await subscribe('school-b', {
      sink: `${targetUrl}/no-handshake`,
      validation: 'agreed',
      contentmode: 'batch',
      batchsupported: true,
    });
    expect(agreed.status).toBe(201);
    expect(agreed.body).toMatchObject({
      status: 'active',
      validation: 'agreed',
      contentmode: 'batch',
      batchsupported: true,
    });
    expect(optionsTo('/no-handshake')).toHaveLength(before);
  });
});

describe('webhook validation handshake against real targets', () => {
  it('WH-4, WH-6: a target that consents makes the subscription active at the rate it allowed', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    expect(created.body).toMatchObject({ status: 'active', allowedrate: 120 });
    const request = optionsTo('/consents').at(-1)!;
    expect(request.headers['webhook-request-origin']).toBe('koerier.local');
    expect(request.headers['webhook-request-rate']).toBe('60');
    expect(request.headers['webhook-request-callback']).toMatch(
      new RegExp(`^${koerier.url}/subscriptions/${created.body['id']}/validation\\?token=`),
    );
  });

  it('WH-4: a target that refuses leaves the subscription rejected, saying why', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/refuses` });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'rejected', statusreason: expect.stringContaining('HTTP 403') });
  });

  it('WH-5: a target answering 405 does not support the handshake: rejected, and it gets nothing', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/no-handshake` });
    expect(created.body).toMatchObject({
      status: 'rejected',
      statusreason: expect.stringContaining('does not support the validation handshake (HTTP 405)'),
    });
  });

  it('WH-4: a target that approves later through the callback (GET or POST) makes the subscription active', async () => {
    for (const method of ['GET', 'POST']) {
      const created = await subscribe('school-a', { sink: `${targetUrl}/approves-later` });
      const id = created.body['id'] as string;
      expect(created.body).toMatchObject({ status: 'pending', validationexpiresat: expect.any(String) });
      const callback = String(optionsTo('/approves-later').at(-1)!.headers['webhook-request-callback']);
      expect(callback).toContain(`/subscriptions/${id}/validation?token=`);
      // Issue 12 item 8: the owner sees where the target approves, never the target's secret.
      expect(created.body['validationcallback']).toBe(new URL(callback).pathname);
      expect(JSON.stringify(created.body)).not.toContain(new URL(callback).searchParams.get('token')!);

      const forged = await fetch(callback.replace(/token=[^&]+/, 'token=guessed'), { method });
      expect(forged.status).toBe(404);
      expect((await call('school-a', 'GET', `/subscriptions/${id}`)).body['status']).toBe('pending');

      const approved = await fetch(callback, { method, headers: { 'webhook-allowed-rate': '30' } });
      seen.push(await approved.text());
      expect(approved.status).toBe(200);
      expect(await call('school-a', 'GET', `/subscriptions/${id}`)).toMatchObject({
        body: { status: 'active', allowedrate: 30 },
      });
      expect((await fetch(callback, { method })).status).toBe(200);
    }
  });

  it('WH-4, WH-5: a target that ignores the request stays pending until the approval window closes, then counts as rejected', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/ignores` });
    const id = created.body['id'] as string;
    // Review #19: in the words every network failure gets, not "timeout".
    expect(created.body).toMatchObject({
      status: 'pending',
      statusreason: expect.stringContaining('the target could not be reached'),
    });
    const callback = String(optionsTo('/ignores').at(-1)!.headers['webhook-request-callback']);
    const closesAt = Date.parse(String(created.body['validationexpiresat']));
    expect(closesAt - Date.now()).toBeLessThanOrEqual(VALIDATION_WINDOW_SECONDS * 1000);
    const read = async () => (await call('school-a', 'GET', `/subscriptions/${id}`)).body;
    const notPending = async () => {
      const body = await read();
      return body['status'] !== 'pending' && body;
    };
    // Pending while the window is open (until a second before it closes: a read on a busy machine
    // may reach the host only after the window has closed)…
    await staysQuiet('a status other than pending', notPending, closesAt - Date.now() - 1000, { intervalMs: 200 });
    // …and rejected once it has closed.
    const rejected = await eventually('the subscription rejected after its approval window', notPending);
    expect(rejected).toMatchObject({ status: 'rejected', statusreason: expect.stringContaining('no consent before') });
    expect((await fetch(callback)).status).toBe(410);
  });

  it('WH-4: a subscription deleted while its validation request is out answers 404 to its POST or PATCH, not a subscription that no longer exists', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/deleted-meanwhile` });
    expect(created.status).toBe(404);
    const id = /[0-9a-f-]{36}/.exec(String(created.body['detail']))![0];
    expect((await call('school-a', 'GET', `/subscriptions/${id}`)).status).toBe(404);

    const existing = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    const moved = await call('school-a', 'PATCH', `/subscriptions/${existing.body['id']}`, {
      sink: `${targetUrl}/deleted-meanwhile`,
    });
    expect(moved.status).toBe(404);
    expect((await call('school-a', 'GET', `/subscriptions/${existing.body['id']}`)).status).toBe(404);
  });

  it('WH-2, WH-5: a retired subscription with consent agreed out of band stays retired on a PATCH that keeps its sink; another sink revives it', async () => {
    const agreed = await subscribe('school-b', { sink: `${targetUrl}/consents?gone=1`, validation: 'agreed' });
    const id = agreed.body['id'] as string;
    const repository = new DynamoDbSubscriptionStore(
      dynamodb,
      tableName('subscriptions'),
      new DynamoDbRouteIndex(dynamodb, tableName('routes')),
    );
    // What the delivery function does when the target answers 410 Gone.
    await repository.updateStatus(id, 'retired', 'the target answered 410 Gone');

    const changed = await call('school-b', 'PATCH', `/subscriptions/${id}`, {
      types: ['nl.edu.leerling.uitgeschreven.v1'],
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      status: 'retired',
      statusreason: 'the target answered 410 Gone',
      types: ['nl.edu.leerling.uitgeschreven.v1'],
    });
    expect(await call('school-b', 'GET', `/subscriptions/${id}`)).toMatchObject({ body: { status: 'retired' } });

    const elsewhere = await call('school-b', 'PATCH', `/subscriptions/${id}`, { sink: `${targetUrl}/consents?gone=0` });
    expect(elsewhere.body).toMatchObject({ status: 'active', sink: `${targetUrl}/consents?gone=0` });
  });

  it('WH-4, issue 12 item 8: a rejected subscription is validated again on request and becomes active once its target consents; the old callback is void', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/changes-mind` });
    const id = created.body['id'] as string;
    expect(created.body).toMatchObject({ status: 'rejected', statusreason: expect.stringContaining('HTTP 403') });
    const firstCallback = String(optionsTo('/changes-mind').at(-1)!.headers['webhook-request-callback']);
    const again = await call('school-a', 'POST', `/subscriptions/${id}/revalidate`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id, status: 'active', sink: `${targetUrl}/changes-mind` });
    expect(again.headers.get('etag')).toBeTruthy();
    expect(optionsTo('/changes-mind')).toHaveLength(2);
    const secondCallback = String(optionsTo('/changes-mind').at(-1)!.headers['webhook-request-callback']);
    expect(secondCallback).not.toBe(firstCallback);
    expect((await fetch(firstCallback)).status).toBe(404);
    // Active now: nothing to validate.
    const active = await call('school-a', 'POST', `/subscriptions/${id}/revalidate`);
    expect(active.status).toBe(409);
    expect(active.body).toMatchObject({
      type: expect.stringContaining('subscription-not-revalidatable'),
      detail: expect.stringContaining('active'),
    });
  });

  it('WH-4, issue 12 item 8: a pending subscription whose target missed the request gets a new request, callback and window', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/approves-later-once` });
    const id = created.body['id'] as string;
    expect(created.body).toMatchObject({ status: 'pending' });
    const again = await call('school-a', 'POST', `/subscriptions/${id}/revalidate`);
    expect(again.body).toMatchObject({ id, status: 'pending', validationexpiresat: expect.any(String) });
    expect(Date.parse(again.body['validationexpiresat'] as string)).toBeGreaterThanOrEqual(
      Date.parse(created.body['validationexpiresat'] as string),
    );
    const [first, second] = optionsTo('/approves-later-once').map((r) => String(r.headers['webhook-request-callback']));
    expect(second).toContain(`/subscriptions/${id}/validation?token=`);
    expect(second).not.toBe(first);
    expect((await fetch(second!, { method: 'POST' })).status).toBe(200);
    expect((await call('school-a', 'GET', `/subscriptions/${id}`)).body['status']).toBe('active');
  });

  it('WH-5, EDU-7, issue 12 item 8: validating again needs a subscription of one’s own that has a validation request to send', async () => {
    const agreed = await subscribe('school-b', { sink: `${targetUrl}/consents`, validation: 'agreed' });
    const refused = await call('school-b', 'POST', `/subscriptions/${agreed.body['id']}/revalidate`);
    expect(refused.status).toBe(409);
    expect(refused.body['detail']).toMatch(/agreed out of band/);
    const theirs = await subscribe('school-a', { sink: `${targetUrl}/refuses` });
    expect((await call('school-b', 'POST', `/subscriptions/${theirs.body['id']}/revalidate`)).status).toBe(404);
    expect((await call(undefined, 'POST', `/subscriptions/${theirs.body['id']}/revalidate`)).status).toBe(401);
    const withoutKey = await call('school-a', 'POST', `/subscriptions/${theirs.body['id']}/revalidate`, undefined, {
      'idempotency-key': '',
    });
    expect(withoutKey.status).toBe(400);
  });

  it('JSON-3, issue 12 item 8: a batch subscription whose target did not declare batch support says so in its answer; one that did, does not', async () => {
    const single = await subscribe('school-a', { sink: `${targetUrl}/consents`, contentmode: 'batch' });
    expect(single.body).toMatchObject({ status: 'active', contentmode: 'batch', batchsupported: false });
    expect(single.body['warnings']).toEqual([
      {
        attribute: 'contentmode',
        rule: 'batch-fallback',
        requirement: 'JSON-3',
        message: expect.stringMatching(/delivered one by one .*Accept-Post: application\/cloudevents-batch\+json/),
      },
    ]);
    expect((await call('school-a', 'GET', `/subscriptions/${single.body['id']}`)).body['warnings']).toEqual(
      single.body['warnings'],
    );
    const batches = await subscribe('school-a', { sink: `${targetUrl}/takes-batches`, contentmode: 'batch' });
    expect(batches.body).toMatchObject({ status: 'active', contentmode: 'batch', batchsupported: true });
    expect(batches.body).not.toHaveProperty('warnings');
    // Asking for single events settles it: the word goes.
    const structured = await call('school-a', 'PATCH', `/subscriptions/${single.body['id']}`, {
      contentmode: 'structured',
    });
    expect(structured.status).toBe(200);
    expect(structured.body).not.toHaveProperty('warnings');
  });

  it('WH-4: a rejected subscription pointed at a consenting sink is validated again and becomes active', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/refuses` });
    const changed = await call('school-a', 'PATCH', `/subscriptions/${created.body['id']}`, {
      sink: `${targetUrl}/consents`,
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ status: 'active', sink: `${targetUrl}/consents` });
  });
});

describe('from publisher to subscriber', () => {
  it('EDU-8, CE-17, EDU-IDEM-15: a published event reaches exactly the matching subscription, once, even when published twice', async () => {
    const type = 'nl.edu.leerling.verhuisd.v1';
    const mine = await subscribe('school-a', {
      sink: `${targetUrl}/consents?person=7`,
      types: [type],
      filters: [{ exact: { subject: 'leerling/7' } }],
    });
    const other = await subscribe('school-a', {
      sink: `${targetUrl}/consents?person=8`,
      types: [type],
      filters: [{ exact: { subject: 'leerling/8' } }],
    });
    expect([mine.body['status'], other.body['status']]).toEqual(['active', 'active']);

    const event = {
      specversion: '1.0',
      id: randomUUID(),
      source: 'urn:nld:oin:00000001000000000001:systeem:lvs',
      type,
      subject: 'leerling/7',
      data: { adres: 'nieuw' },
    };
    const publisher = await koerier.token('dev-publisher', ['events:publish']);
    for (let i = 0; i < 2; i++) {
      const published = await tryPublish(koerier.url, publisher, event);
      expect(published.status).toBe(202);
    }

    const deliveredTo = (person: string) =>
      received.filter((r) => r.method === 'POST' && r.path === `/consents?person=${person}`);
    await eventually('the delivery to person 7', () => deliveredTo('7').length > 0, { timeoutMs: 15_000 });
    // Give a duplicate delivery time to show up, were there one.
    await staysQuiet(
      'duplicate delivery',
      () => deliveredTo('7').length > 1 && `${deliveredTo('7').length} deliveries`,
      2500,
    );
    const deliveries = deliveredTo('7');
    expect(deliveries).toHaveLength(1);
    expect(JSON.parse(deliveries[0]!.body)).toEqual(event);
    expect(deliveries[0]!.headers['idempotency-key']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(deliveredTo('8')).toHaveLength(0);
  });
});

describe('sink credentials', () => {
  it('EDU-14: a PATCH that moves the sink to another origin must give sinkcredential again; within the origin the credential stays', async () => {
    const created = await subscribe('school-a', {
      sink: `${targetUrl}/consents?moving=1`,
      sinkcredential: clientCredentials('moving-sink-secret'),
    });
    const id = created.body['id'] as string;
    const otherOrigin = targetUrl.replace('127.0.0.1', 'localhost');

    const samePlace = await call('school-a', 'PATCH', `/subscriptions/${id}`, {
      sink: `${targetUrl}/consents?moving=2`,
    });
    expect(samePlace.status).toBe(200);
    expect(samePlace.body['sinkcredential']).toEqual({ credentialtype: 'CLIENTCREDENTIALS' });

    const asAdmin = await call(ADMIN, 'PATCH', `/subscriptions/${id}`, { sink: `${otherOrigin}/consents` });
    expect(asAdmin.status).toBe(400);
    expect(asAdmin.body['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential', rule: 'required-for-new-origin' }),
    ]);
    expect(
      (await call('school-a', 'PATCH', `/subscriptions/${id}`, { sink: `${otherOrigin}/consents`, types: [TYPE] }))
        .status,
    ).toBe(400);
    expect((await call('school-a', 'GET', `/subscriptions/${id}`)).body['sink']).toBe(`${targetUrl}/consents?moving=2`);

    const withNew = await call('school-a', 'PATCH', `/subscriptions/${id}`, {
      sink: `${otherOrigin}/consents`,
      sinkcredential: clientCredentials('new-sink-secret'),
    });
    expect(withNew.status).toBe(200);
    expect(withNew.body).toMatchObject({
      sink: `${otherOrigin}/consents`,
      sinkcredential: { credentialtype: 'CLIENTCREDENTIALS' },
    });
    // WH-3: removing the credential would leave deliveries without a token.
    const withNone = await call('school-a', 'PATCH', `/subscriptions/${id}`, {
      sink: `${targetUrl}/consents`,
      sinkcredential: null,
    });
    expect(withNone.status).toBe(400);
    expect(withNone.body['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential', rule: 'required', requirement: 'WH-3' }),
    ]);
  });

  it('EDU-14: credentials are accepted but never returned by any answer nor written to any log line', async () => {
    // EDU-4: refused by default (only OAuth2 client credentials), and the refusal does not repeat it either.
    const bearer = await subscribe('school-a', {
      sink: `${targetUrl}/consents`,
      sinkcredential: { credentialtype: 'ACCESSTOKEN', accesstoken: SECRETS[0] },
    });
    expect(bearer.status).toBe(400);
    expect(bearer.body['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential.credentialtype', rule: 'oauth2-only' }),
    ]);
    const oauth = await subscribe('school-a', {
      sink: `${targetUrl}/consents`,
      sinkcredential: {
        credentialtype: 'CLIENTCREDENTIALS',
        tokenurl: 'https://idp.example/token',
        clientid: 'koerier',
        clientsecret: SECRETS[1],
      },
    });
    expect(oauth.body['sinkcredential']).toEqual({ credentialtype: 'CLIENTCREDENTIALS' });
    const id = oauth.body['id'] as string;
    await call('school-a', 'GET', `/subscriptions/${id}`);
    await call('school-a', 'GET', '/subscriptions?limit=100');
    // A PATCH without sinkcredential keeps it; one with null is refused (WH-3).
    expect(
      (await call('school-a', 'PATCH', `/subscriptions/${id}`, { types: ['nl.edu.x.v1'] })).body['sinkcredential'],
    ).toEqual({
      credentialtype: 'CLIENTCREDENTIALS',
    });
    expect((await call('school-a', 'PATCH', `/subscriptions/${id}`, { sinkcredential: null })).status).toBe(400);
    await call('school-a', 'DELETE', `/subscriptions/${id}`);

    const everything = [...seen, ...logLines, ...koerier.logs].join('\n');
    expect(logLines.some((line) => line.includes('subscription created'))).toBe(true);
    expect(seen.length).toBeGreaterThan(50);
    for (const secret of SECRETS) expect(everything).not.toContain(secret);
  });
});

describe('bounded input (review #9, #19)', () => {
  it('review #9: a merge patch nested 100,000 levels deep gets 400 problem+json, not 500', async () => {
    const created = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    const id = created.body['id'] as string;
    const deep = `${'{"filters":'.repeat(1)}${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    const response = await fetch(`${koerier.url}/subscriptions/${id}`, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${tokens['school-a']}`,
        'content-type': 'application/merge-patch+json',
        'idempotency-key': randomUUID(),
      },
      body: deep,
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ status: 400, type: expect.stringContaining('json-too-deep') });
    const arrays = await fetch(`${koerier.url}/subscriptions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens['school-a']}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: `{"sink":"${targetUrl}/consents","types":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
    });
    expect(arrays.status).toBe(400);
    // Refused on the text, before anything walks the value.
    expect(await arrays.json()).toMatchObject({ type: expect.stringContaining('json-too-deep') });
    expect((await call('school-a', 'GET', `/subscriptions/${id}`)).status).toBe(200);
  });

  it('WH-1, issue 12 item 8: a sink or token URL that is a literal private or link-local address is refused with 400 at creation, and nothing is created', async () => {
    // Every subscription of school-a, from every page: none may be added by a refused create.
    const all = async () => {
      const ids: string[] = [];
      for (let path: string | undefined = '/subscriptions'; path;) {
        const page = await call('school-a', 'GET', path);
        ids.push(...(page.body['subscriptions'] as { id: string }[]).map((s) => s.id));
        path = page.body['next'] as string | undefined;
      }
      return ids;
    };
    const before = await all();
    for (const sink of [
      'https://10.0.0.5/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00::1]/hook',
    ]) {
      const refused = await subscribe('school-a', { sink });
      expect(refused.status, sink).toBe(400);
      expect(refused.body['errors'], sink).toEqual([
        expect.objectContaining({ attribute: 'sink', rule: 'public-address' }),
      ]);
    }
    const token = await subscribe('school-a', {
      sink: `${targetUrl}/consents`,
      sinkcredential: { ...clientCredentials(), tokenurl: 'https://192.168.1.1/token' },
    });
    expect(token.status).toBe(400);
    expect(token.body['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential.tokenurl', rule: 'public-address' }),
    ]);
    expect(await all()).toEqual(before);
    // The laptop host still takes its own loopback (the target of every other test here).
    expect((await subscribe('school-a', { sink: `${targetUrl}/consents` })).status).toBe(201);
  });

  it('review #19: a sink or token URL on a port other than the allowed ones is refused at creation and on PATCH', async () => {
    // The laptop host allows any port on loopback only; a public name must use 443.
    const refused = await subscribe('school-a', { sink: 'https://hooks.example:8443/hook' });
    expect(refused.status).toBe(400);
    expect(refused.body['errors']).toEqual([expect.objectContaining({ attribute: 'sink', rule: 'port' })]);
    const token = await subscribe('school-a', {
      sink: `${targetUrl}/consents`,
      sinkcredential: { ...clientCredentials(), tokenurl: 'https://idp.example:22/token' },
    });
    expect(token.body['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential.tokenurl', rule: 'port' }),
    ]);
    const created = await subscribe('school-a', { sink: `${targetUrl}/consents` });
    const patched = await call('school-a', 'PATCH', `/subscriptions/${created.body['id']}`, {
      sink: 'https://hooks.example:6379/hook',
      sinkcredential: clientCredentials(),
    });
    expect(patched.status).toBe(400);
    expect(patched.body['errors']).toEqual([expect.objectContaining({ attribute: 'sink', rule: 'port' })]);
  });
});
