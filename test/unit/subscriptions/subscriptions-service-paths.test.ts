/**
 * The subscriptions use case on the paths the main file (subscriptions-service.test.ts) leaves out:
 * pull subscriptions and their queues, the audit record, and the callback's other answers. Same
 * set-up: the in-memory store, a handshake transport that consents, a cipher that only wraps.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import type { CredentialCipher } from '../../../functions/core/credentials/sink-credential.js';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import { InMemorySubscriptionStore } from '../../support/memory/memory-subscription-store.js';
import { parseEntitlements } from '../../../functions/core/subscriptions/entitlements.js';
import type { PullQueueAdmin } from '../../../functions/core/subscriptions/pull-queue-admin.js';
import { SubscriptionsService } from '../../../functions/core/subscriptions/subscriptions-service.js';
import { subscriptionsSettings } from './subscription-fixtures.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { answering } from '../../support/refusals.js';

const TYPE = 'nl.edu.leerling.ingeschreven.v1';
const settings = subscriptionsSettings();
const cipher: CredentialCipher = {
  encrypt: async (plaintext, context) => Buffer.from(JSON.stringify({ context, plaintext })).toString('base64url'),
  decrypt: async (ciphertext) =>
    (JSON.parse(Buffer.from(ciphertext, 'base64url').toString('utf8')) as { plaintext: string }).plaintext,
};
const credential = (secret = 's3cr3t') => ({
  credentialtype: 'CLIENTCREDENTIALS',
  tokenurl: 'https://idp.example/token',
  clientid: 'koerier',
  clientsecret: secret,
});

let store: InMemorySubscriptionStore;
let queueCalls: string[];
let removeFails: boolean;
let audited: { message: string; fields: Record<string, unknown> }[];
let errors: { message: string; fields: Record<string, unknown> }[];
let service: SubscriptionsService;
let consents: boolean;
let callback: URL | undefined;

const queues: PullQueueAdmin = {
  create: async (id, pull) => void queueCalls.push(`create ${id} ${JSON.stringify(pull)}`),
  update: async (id, pull) => void queueCalls.push(`update ${id} ${JSON.stringify(pull)}`),
  remove: async (id) => {
    queueCalls.push(`remove ${id}`);
    if (removeFails) throw new Error('queue service unavailable');
  },
};

const serviceWith = ({ withQueues = true, withAudit = true } = {}) =>
  answering(
    new SubscriptionsService({
      store,
      cipher,
      sendValidationRequest: async (sent) => {
        callback = new URL(sent.headers['webhook-request-callback']!);
        return consents
          ? { status: 200, headers: { 'webhook-allowed-origin': 'koerier.test' } }
          : { status: 403, headers: {} };
      },
      entitlements: parseEntitlements(JSON.stringify({ 'school-a': [{ typePrefix: 'nl.edu.' }] })),
      settings,
      clock: () => Date.UTC(2026, 2, 1, 12),
      ...(withAudit
        ? {
            audit: {
              ...silentLog,
              info: (message: string, fields?: Record<string, unknown>) =>
                void audited.push({ message, fields: fields ?? {} }),
              error: (message: string, fields?: Record<string, unknown>) =>
                void errors.push({ message, fields: fields ?? {} }),
            },
          }
        : {}),
      ...(withQueues ? { pullQueues: queues } : {}),
    }),
  );

beforeEach(() => {
  store = new InMemorySubscriptionStore(() => Date.UTC(2026, 2, 1, 12));
  queueCalls = [];
  removeFails = false;
  consents = true;
  callback = undefined;
  audited = [];
  errors = [];
  service = serviceWith();
});

const school: Principal = { clientId: 'school-a', scopes: new Set(['subscriptions:manage']) };
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
    'idempotency-key': randomUUID(),
    ...headers,
  },
  query,
  routeKey: 'POST /subscriptions',
  pathParameters: {},
  body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
});
const json = (response: HttpResponse) => JSON.parse(response.body.toString()) as Record<string, unknown>;
const pullBody = { delivery: 'pull', types: [TYPE], maxdeliverycount: 5, retentionseconds: 3600 };

describe('subscriptions use case: pull subscriptions and their queues', () => {
  it('EDU-17: a pull subscription is made with its queues, and a create repeated with its key answers it without making them again', async () => {
    const key = { 'idempotency-key': randomUUID() };
    const first = await service.create(school, request('POST', pullBody, key));
    expect(first.status).toBe(201);
    const id = String(json(first)['id']);
    expect(queueCalls).toEqual([`create ${id} {"maxDeliveryCount":5,"retentionSeconds":3600}`]);
    expect((await store.get(id))?.status).toBe('active');

    const again = await service.create(school, request('POST', pullBody, key));
    expect(again.status).toBe(201);
    expect(json(again)['id']).toBe(id);
    expect(again.headers['location']).toBe(first.headers['location']);
    expect(first.headers['location']).toMatch(new RegExp(`/subscriptions/${id}$`));
    expect(queueCalls).toHaveLength(1);
  });

  it('EDU-17: a PATCH of the queue settings applies them to the queues; one that leaves them as they are does not touch them', async () => {
    const id = String(json(await service.create(school, request('POST', pullBody)))['id']);
    expect(
      (await service.update(school, id, request('PATCH', { types: [TYPE, 'nl.edu.leerling.uitgeschreven.v1'] })))
        .status,
    ).toBe(200);
    expect(queueCalls).toHaveLength(1);
    expect((await service.update(school, id, request('PATCH', { retentionseconds: 7200 }))).status).toBe(200);
    expect(queueCalls.at(-1)).toBe(`update ${id} {"maxDeliveryCount":5,"retentionSeconds":7200}`);
    expect((await store.get(id))?.pull).toEqual({ maxDeliveryCount: 5, retentionSeconds: 7200 });
  });

  it('EDU-17: a PATCH may not turn a pull subscription into a push one (400, nothing changed)', async () => {
    const id = String(json(await service.create(school, request('POST', pullBody)))['id']);
    const before = await store.get(id);
    const patch = {
      delivery: 'push',
      sink: 'https://ontvanger.example/in',
      sinkcredential: credential(),
      maxdeliverycount: null,
      retentionseconds: null,
    };
    expect((await service.update(school, id, request('PATCH', patch))).status).toBe(400);
    expect(await store.get(id)).toEqual(before);
  });

  it('EDU-17: deleting a pull subscription deletes its queues; when that fails the delete still stands and the failure is logged', async () => {
    const id = String(json(await service.create(school, request('POST', pullBody)))['id']);
    removeFails = true;
    expect((await service.remove(school, id)).status).toBe(200);
    expect(queueCalls.at(-1)).toBe(`remove ${id}`);
    expect(await store.get(id)).toBeUndefined();
    expect(errors).toEqual([
      { message: expect.any(String), fields: { subscriptionId: id, error: 'queue service unavailable' } },
    ]);
  });

  it('EDU-17: without a queue service a pull subscription is not made, and nothing is stored', async () => {
    service = serviceWith({ withQueues: false });
    const response = await service.create(school, request('POST', pullBody)).catch((error: unknown) => error);
    expect(response).toBeInstanceOf(Error);
    expect((await service.list(school, request('GET'))).body.toString()).not.toContain(TYPE);
  });

  it('EDU-13: the audit record names a pull subscription as pull, and a push one by the origin of its sink only', async () => {
    await service.create(school, request('POST', pullBody));
    await service.create(
      school,
      request('POST', { types: [TYPE], sink: 'https://ontvanger.example/in?key=secret', sinkcredential: credential() }),
    );
    expect(audited.map((entry) => entry.fields)).toEqual([
      expect.objectContaining({ delivery: 'pull', owner: 'school-a', status: 'active' }),
      expect.objectContaining({ sinkOrigin: 'https://ontvanger.example', owner: 'school-a' }),
    ]);
    expect(audited[0]!.fields).not.toHaveProperty('sinkOrigin');
    expect(JSON.stringify(audited)).not.toContain('secret');
  });
});

describe('subscriptions use case: the callback and the input rules', () => {
  const approve = (id: string, token?: string, headers: Record<string, string> = {}) =>
    service.approve(id, request('GET', undefined, headers, token === undefined ? {} : { token }));
  const refusedPush = async () => {
    consents = false;
    const id = String(
      json(
        await service.create(
          school,
          request('POST', { types: [TYPE], sink: 'https://ontvanger.example/in', sinkcredential: credential() }),
        ),
      )['id'],
    );
    return { id, token: callback!.searchParams.get('token')! };
  };

  it('WH-4: the callback of an unknown subscription, or of one without a handshake, is 404 like a wrong token', async () => {
    expect((await approve('no-such-subscription', 'x')).status).toBe(404);
    const pull = String(json(await service.create(school, request('POST', pullBody)))['id']);
    expect((await approve(pull, 'x')).status).toBe(404);
    expect((await approve(pull)).status).toBe(404);
  });

  it('WH-6: an approval through the callback keeps the rate the target allows in WebHook-Allowed-Rate', async () => {
    const { id, token } = await refusedPush();
    expect((await approve(id, token, { 'webhook-allowed-rate': '30' })).status).toBe(200);
    expect(await store.get(id)).toMatchObject({ status: 'active', allowedRatePerMinute: 30 });
  });

  it('WH-4: approving an active subscription again answers 200 and leaves it as it is', async () => {
    const { id, token } = await refusedPush();
    await approve(id, token, { 'webhook-allowed-rate': '30' });
    const approved = await store.get(id);
    expect((await approve(id, token, { 'webhook-allowed-rate': '10' })).status).toBe(200);
    expect(await store.get(id)).toEqual(approved);
  });

  it('WH-4: a subscription that is neither pending nor rejected cannot be approved through the callback: 409', async () => {
    const { id, token } = await refusedPush();
    const current = (await store.get(id))!;
    await store.save({ ...current, status: 'suspended' }, current);
    const response = await approve(id, token);
    expect(response.status).toBe(409);
    expect((await store.get(id))?.status).toBe('suspended');
  });

  it('issue 12 #6: signdeliveries is refused 400 where no signing key is configured', async () => {
    const body = {
      types: [TYPE],
      sink: 'https://ontvanger.example/in',
      sinkcredential: credential(),
      signdeliveries: true,
    };
    expect((await service.create(school, request('POST', body))).status).toBe(400);
  });

  it('EDU-13: a body that is JSON but not a valid subscription is refused 400', async () => {
    expect((await service.create(school, request('POST', { types: 5 }))).status).toBe(400);
  });

  it('EDU-17: without an audit log a failed deletion of the queues still leaves the subscription deleted', async () => {
    service = serviceWith({ withAudit: false });
    const id = String(json(await service.create(school, request('POST', pullBody)))['id']);
    removeFails = true;
    expect((await service.remove(school, id)).status).toBe(200);
    expect(await store.get(id)).toBeUndefined();
  });

  it('issue 12 item 8: validating again asks a rejected target once more; an active or unknown subscription is refused', async () => {
    const { id } = await refusedPush();
    consents = true;
    const again = await service.revalidate(school, id);
    expect(again.status).toBe(200);
    expect(await store.get(id)).toMatchObject({ status: 'active' });
    expect((await service.revalidate(school, id)).status).toBe(409);
    expect((await service.revalidate(school, 'no-such-subscription')).status).toBe(404);
    expect(audited.map((entry) => entry.fields['status'])).toEqual(['rejected', 'active']);
  });
});
