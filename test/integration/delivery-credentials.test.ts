/**
 * Who may receive what, and with which credential (issue 8, items 14, 16, 18): the delivery
 * function behind the SQS poller against the emulators, the subscriptions API and the delivery
 * admin over the same tables, real HTTPS receivers that are also the subscribers' token endpoints.
 * The deployment default applies: only OAuth2 client credentials towards targets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import type { Principal } from '../../functions/core/auth/access-tokens.js';
import type { HttpRequest } from '../../functions/core/http/messages.js';
import { parseEntitlements } from '../../functions/core/subscriptions/entitlements.js';
import { SubscriptionsService } from '../../functions/core/subscriptions/subscriptions-service.js';
import { scripts } from '../support/https-receiver.js';
import { cloudEvent, noMoreRequests, startDeliveryHarness, type DeliveryHarness } from './delivery-harness.js';
import { answering } from '../support/refusals.js';

let koerier: DeliveryHarness;
let api: SubscriptionsService;
beforeAll(async () => {
  koerier = await startDeliveryHarness({
    [settingEnv.deliveryRetryInitialSeconds]: '1',
    [settingEnv.deliveryRetryMaxDelaySeconds]: '1',
    [settingEnv.deliveryRetryWindowSeconds]: '4',
  });
  api = answering(
    new SubscriptionsService({
      store: koerier.subscriptions,
      cipher: koerier.cipher,
      sendValidationRequest: async () => ({ failure: 'not used: validation is agreed', permanent: true }),
      entitlements: parseEntitlements(JSON.stringify({ subscriber: [{ typePrefix: '' }] })),
      settings: {
        allowLoopbackSinks: true,
        allowedPorts: [443],
        sinkCredentials: 'oauth2-only',
        webhookOrigin: 'koerier.test',
        publicBaseUrl: '',
        validationWindowSeconds: 3600,
        validationAgreedClients: ['subscriber'],
        maxRetryWindowSeconds: 7 * 24 * 3600,
      },
    }),
  );
});
afterAll(async () => {
  await koerier?.stop();
});

const owner: Principal = { clientId: 'subscriber', scopes: new Set(['subscriptions:manage']) };
const request = (method: string, path: string, body?: unknown, contentType = 'application/json'): HttpRequest => ({
  method,
  path,
  headers: { 'content-type': contentType, 'idempotency-key': crypto.randomUUID() },
  query: {},
  routeKey: 'POST /subscriptions',
  pathParameters: {},
  body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
});
const json = (response: { body: Buffer | string }) => JSON.parse(response.body.toString()) as Record<string, unknown>;
/** Longer than the first retry (1 s here) takes to come round the queue: had it been retried, it would show. */
const RETRY_WOULD_SHOW_MS = 1500;

describe.concurrent('WH-3, EDU-4, EDU-14: a credential on every push subscription', () => {
  it('WH-3: a record written before credentials were required is suspended (credential-required) when the dispatcher meets it; a PATCH with a credential reactivates it and the held delivery goes out with a token', async () => {
    const receiver = await koerier.receiver();
    // The old way: stored without a credential.
    const old = await koerier.subscribe(receiver.url, { sinkCredential: null });
    expect(old.credential).toBeUndefined();
    const message = await koerier.deliver(old.id);
    const [parked] = await koerier.awaitDeadLetters(old.id);
    expect(parked).toMatchObject({ deliveryId: message.deliveryId, reason: 'subscription-suspended' });
    expect(receiver.connectionCount).toBe(0);

    const shown = json(await api.read(owner, old.id));
    expect(shown).toMatchObject({
      status: 'suspended',
      suspendedfor: 'credential-required',
      statusreason: expect.stringContaining('sinkcredential'),
    });

    // Resuming does not give it a token; a PATCH that keeps it without one is refused, naming the member.
    const resume = await koerier.admin.resume(owner, old.id);
    expect(resume.status).toBe(409);
    expect(json(resume)).toMatchObject({ type: expect.stringContaining('credential-required') });
    const withoutCredential = await api.update(
      owner,
      old.id,
      request(
        'PATCH',
        `/subscriptions/${old.id}`,
        { types: ['nl.example.delivery.tested.v1'] },
        'application/merge-patch+json',
      ),
    );
    expect(withoutCredential.status).toBe(400);
    expect(json(withoutCredential)['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential', rule: 'required' }),
    ]);

    const patched = await api.update(
      owner,
      old.id,
      request(
        'PATCH',
        `/subscriptions/${old.id}`,
        { sinkcredential: receiver.sinkCredential },
        'application/merge-patch+json',
      ),
    );
    expect(patched.status).toBe(200);
    expect(json(patched)).toMatchObject({
      status: 'active',
      sinkcredential: { credentialtype: 'CLIENTCREDENTIALS' },
      statusreason: expect.stringContaining('redrive'),
    });
    expect(json(patched)).not.toHaveProperty('suspendedfor');

    const redrive = await koerier.admin.redrive(
      owner,
      old.id,
      request('POST', `/subscriptions/${old.id}/dead-letters/redrive`, { all: true }),
    );
    expect(json(redrive)).toMatchObject({ redriven: [{ deliveryId: message.deliveryId }] });
    const [delivered] = await receiver.waitForRequests(1);
    expect(delivered!.headers['authorization']).toBe(`Bearer ${receiver.accessToken}`);
  });

  it('EDU-4: a stored static token, where only OAuth2 client credentials are allowed, is suspended likewise and never sent', async () => {
    const receiver = await koerier.receiver();
    const old = await koerier.subscribe(receiver.url, { sinkCredential: { kind: 'bearer', token: 'static-token-1' } });
    await koerier.deliver(old.id);
    await koerier.awaitDeadLetters(old.id);
    const stored = await koerier.subscriptions.get(old.id);
    expect(stored).toMatchObject({
      status: 'suspended',
      suspendedFor: 'credential-required',
      statusReason: expect.stringContaining('OAuth2'),
    });
    expect(receiver.connectionCount).toBe(0);
    // Keeping the stored token in a PATCH is refused too.
    const patch = await api.update(
      owner,
      old.id,
      request('PATCH', `/subscriptions/${old.id}`, { types: ['x.v1'] }, 'application/merge-patch+json'),
    );
    expect(json(patch)['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential', rule: 'oauth2-only' }),
    ]);
  });

  it('WH-3: the subscriptions API refuses a push subscription without sinkcredential, and a static token where only OAuth2 is allowed', async () => {
    const receiver = await koerier.receiver();
    const none = await api.create(
      owner,
      request('POST', '/subscriptions', { sink: receiver.url, validation: 'agreed' }),
    );
    expect(none.status).toBe(400);
    expect(json(none)['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential', rule: 'required', requirement: 'WH-3' }),
    ]);
    const bearer = await api.create(
      owner,
      request('POST', '/subscriptions', {
        sink: receiver.url,
        validation: 'agreed',
        sinkcredential: { credentialtype: 'ACCESSTOKEN', accesstoken: 'abc' },
      }),
    );
    expect(json(bearer)['errors']).toEqual([
      expect.objectContaining({ attribute: 'sinkcredential.credentialtype', rule: 'oauth2-only' }),
    ]);
  });
});

describe.concurrent('review #18: a token endpoint failure in fixed words', () => {
  it.each([
    ['a closed port', 'https://127.0.0.1:1/token', /ECONNREFUSED|127\.0\.0\.1|connect\b/],
    ['a private address', 'https://10.0.0.7/token', /10\.0\.0\.7|private|refused-address/],
  ])(
    'review #18: with %s the attempt, the dead letter and the API answers hold no address, port or errno; the operator log does',
    async (_case, tokenUrl, leak) => {
      const receiver = await koerier.receiver();
      const subscription = await koerier.subscribe(receiver.url, {
        sinkCredential: { kind: 'oauth2-client-credentials', tokenUrl, clientId: 'c', clientSecret: 's' },
      });
      const message = await koerier.deliver(subscription.id);
      const [deadLetter] = await koerier.awaitDeadLetters(subscription.id);
      expect(deadLetter).toMatchObject({
        reason: 'exhausted',
        detail: expect.stringContaining('the token endpoint could not be reached'),
      });
      const attempts = await koerier.attempts(subscription.id);
      expect(attempts.length).toBeGreaterThan(0);
      for (const attempt of attempts)
        expect(attempt.error).toEqual({ code: 'credential', detail: 'the token endpoint could not be reached' });
      const listed = await koerier.admin.listAttempts(
        owner,
        subscription.id,
        request('GET', `/subscriptions/${subscription.id}/deliveries`),
      );
      const deadLetters = await koerier.admin.listDeadLetters(
        owner,
        subscription.id,
        request('GET', `/subscriptions/${subscription.id}/dead-letters`),
      );
      for (const text of [
        JSON.stringify(deadLetter),
        JSON.stringify(attempts),
        listed.body.toString(),
        deadLetters.body.toString(),
      ])
        expect(text).not.toMatch(leak);
      // Nor how long the failure took (review #19: a timing oracle for closed against filtered ports).
      for (const text of [listed.body.toString(), deadLetters.body.toString()]) expect(text).not.toContain('latencyMs');
      expect(receiver.connectionCount).toBe(0);
      expect(koerier.logs.some((line) => line.includes('token endpoint failed') && leak.test(line))).toBe(true);
      expect(message.deliveryId).toBe(deadLetter!.deliveryId);
    },
  );
});

describe.concurrent('review #16: redrive and resume re-check entitlement and filters', () => {
  const revoked = JSON.stringify({ subscriber: [{ typePrefix: 'nl.example.other.' }] });

  it('review #16: a grant revoked after dead-lettering keeps the dead letter (withheld: not-entitled); restored, it is redriven', async () => {
    const receiver = await koerier.receiver(scripts.sequence([{ respond: 400 }]));
    const subscription = await koerier.subscribe(receiver.url);
    const message = await koerier.deliver(subscription.id);
    await koerier.awaitDeadLetters(subscription.id);

    const refused = await koerier
      .adminWith(revoked)
      .redrive(owner, subscription.id, request('POST', '/redrive', { all: true }));
    expect(json(refused)).toMatchObject({
      redriven: [],
      withheld: [{ deliveryId: message.deliveryId, reason: 'not-entitled' }],
    });
    expect(await koerier.deadLetters(subscription.id)).toMatchObject([
      { deliveryId: message.deliveryId, reason: 'rejected' },
    ]);
    await noMoreRequests(receiver, 1, RETRY_WOULD_SHOW_MS);
    expect(receiver.requests).toHaveLength(1);

    const allowed = await koerier.admin.redrive(
      owner,
      subscription.id,
      request('POST', '/redrive', { deliveryIds: [message.deliveryId] }),
    );
    expect(json(allowed)).toMatchObject({ redriven: [{ deliveryId: message.deliveryId }] });
    expect(json(allowed)).not.toHaveProperty('withheld');
    await receiver.waitForRequests(2);
  });

  it('review #16: filters changed after dead-lettering keep the dead letter (withheld: no-longer-matches)', async () => {
    const receiver = await koerier.receiver(scripts.sequence([{ respond: 400 }]));
    const subscription = await koerier.subscribe(receiver.url);
    const message = await koerier.deliver(subscription.id, [cloudEvent(undefined, { subject: 'leerling-1' })]);
    await koerier.awaitDeadLetters(subscription.id);
    const { routeKeys: _k, version: _v, ...draft } = subscription;
    await koerier.subscriptions.save({ ...draft, filters: [{ exact: { subject: 'leerling-2' } }] }, subscription);

    const response = await koerier.admin.redrive(owner, subscription.id, request('POST', '/redrive', { all: true }));
    expect(json(response)).toMatchObject({
      redriven: [],
      withheld: [{ deliveryId: message.deliveryId, reason: 'no-longer-matches' }],
    });
    expect(await koerier.deadLetters(subscription.id)).toHaveLength(1);
    await noMoreRequests(receiver, 1, RETRY_WOULD_SHOW_MS);
    expect(receiver.requests).toHaveLength(1);
  });

  it('review #16: resume sends again only what the owner is still entitled to; the rest stays parked', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, {
      status: 'suspended',
      suspendedFor: 'target-failing',
      statusReason: 'failing',
    });
    const kept = await koerier.deliver(subscription.id, [cloudEvent(undefined, { type: 'nl.example.other.v1' })]);
    const held = await koerier.deliver(subscription.id);
    await koerier.awaitDeadLetters(subscription.id, 2);

    const resumed = await koerier.adminWith(revoked).resume(owner, subscription.id);
    expect(resumed.status).toBe(200);
    expect(json(resumed)).toMatchObject({
      status: 'active',
      redriven: 1,
      withheld: [{ deliveryId: held.deliveryId, reason: 'not-entitled' }],
    });
    const [delivered] = await receiver.waitForRequests(1);
    expect(JSON.parse(delivered!.body)).toMatchObject({ type: 'nl.example.other.v1' });
    expect(await koerier.deadLetters(subscription.id)).toMatchObject([
      { deliveryId: held.deliveryId, reason: 'subscription-suspended' },
    ]);
    expect(kept.deliveryId).not.toBe(held.deliveryId);
  });
});
