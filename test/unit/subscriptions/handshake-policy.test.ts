/**
 * Issue 36 item 5: who is asked the validation handshake follows the deployment's profile
 * (functions/core/webhooks/handshake-policy.ts). The Edukoppeling profile drops abuse protection
 * (rule 3f, EDU-3): a partner of the directory has its consent agreed out of band. NL GOV keeps
 * asking (`required`, the default).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { InMemorySubscriptionStore } from '../../support/memory/memory-subscription-store.js';
import { parseEntitlements } from '../../../functions/core/subscriptions/entitlements.js';
import { SubscriptionsService } from '../../../functions/core/subscriptions/subscriptions-service.js';
import type { ValidationHandshakePolicy } from '../../../functions/core/webhooks/handshake-policy.js';
import type { ValidationTransport } from '../../../functions/core/webhooks/validation-handshake.js';
import { answering } from '../../support/refusals.js';
import { subscriptionsSettings } from './subscription-fixtures.js';

const TYPE = 'nl.edu.leerling.ingeschreven.v1';
/** The partner directory's entitlements: every partner has an entry. */
const directory = parseEntitlements(JSON.stringify({ 'school-a': [{ typePrefix: 'nl.edu.' }] }));
const clientCredentials = {
  credentialtype: 'CLIENTCREDENTIALS',
  tokenurl: 'https://idp.ontvanger.example/token',
  clientid: 'koerier',
  clientsecret: 's3cr3t',
};

/** A service whose targets all answer the handshake 405, as a receiver without OPTIONS does; `sent` records every request. */
function deployment(validationHandshake?: ValidationHandshakePolicy) {
  const sent: string[] = [];
  const transport: ValidationTransport = async (request) => {
    sent.push(request.url);
    return { status: 405, headers: { allow: 'POST' } };
  };
  const service = answering(
    new SubscriptionsService({
      store: new InMemorySubscriptionStore(),
      cipher: { encrypt: async (plaintext) => plaintext, decrypt: async (ciphertext) => ciphertext },
      sendValidationRequest: transport,
      entitlements: directory,
      settings: subscriptionsSettings(validationHandshake === undefined ? {} : { validationHandshake }),
      audit: silentLog,
    }),
  );
  const call = (method: 'POST' | 'PATCH', body: unknown): HttpRequest => ({
    method,
    path: '/subscriptions',
    headers: {
      'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
      'idempotency-key': randomUUID(),
    },
    query: {},
    routeKey: 'POST /subscriptions',
    pathParameters: {},
    body: Buffer.from(JSON.stringify(body)),
  });
  const principal = { clientId: 'school-a', scopes: new Set(['subscriptions:manage']) };
  return {
    sent,
    create: (body: Record<string, unknown>) =>
      service.create(
        principal,
        call('POST', {
          sink: 'https://ontvanger.example/hook',
          types: [TYPE],
          sinkcredential: clientCredentials,
          ...body,
        }),
      ),
    patch: (id: string, body: Record<string, unknown>) => service.update(principal, id, call('PATCH', body)),
  };
}

const json = (response: HttpResponse) => JSON.parse(response.body.toString()) as Record<string, unknown>;

describe('the handshake per profile (issue 36 item 5)', () => {
  it("EDU-3, WH-5: Edukoppeling (agreed-for-directory-partners): a partner's push subscription is agreed and active at once, no OPTIONS sent", async () => {
    const koerier = deployment('agreed-for-directory-partners');
    const created = await koerier.create({});
    expect(created.status).toBe(201);
    expect(json(created)).toMatchObject({
      status: 'active',
      validation: 'agreed',
      statusreason: 'consent agreed out of band (WH-5)',
    });
    expect(koerier.sent).toEqual([]);
    // Declared out loud it is allowed too, without being among the operator's agreed clients.
    expect(json(await koerier.create({ validation: 'agreed', batchsupported: true }))).toMatchObject({
      status: 'active',
      batchsupported: true,
    });
    expect(koerier.sent).toEqual([]);
  });

  it('EDU-3, WH-4: Edukoppeling: a subscriber that asks for the handshake still gets it', async () => {
    const koerier = deployment('agreed-for-directory-partners');
    const created = await koerier.create({ validation: 'handshake' });
    expect(json(created)).toMatchObject({
      status: 'rejected',
      validation: 'handshake',
      statusreason: expect.stringContaining('(HTTP 405)'),
    });
    expect(koerier.sent).toEqual(['https://ontvanger.example/hook']);
    // A PATCH keeps what the subscription says; leaving `validation` out (null) takes the deployment's default.
    const id = json(created)['id'] as string;
    expect(json(await koerier.patch(id, { types: [TYPE, `${TYPE}.x`] }))).toMatchObject({
      validation: 'handshake',
      status: 'rejected',
    });
    expect(json(await koerier.patch(id, { validation: null }))).toMatchObject({
      validation: 'agreed',
      status: 'active',
    });
  });

  it('WH-5, EDU-3: NL GOV (required, the default): the same subscription gets the handshake, is rejected on 405, and may not declare "agreed"', async () => {
    for (const koerier of [deployment(), deployment('required')]) {
      const created = await koerier.create({});
      expect(json(created)).toMatchObject({
        status: 'rejected',
        validation: 'handshake',
        statusreason: expect.stringContaining('(HTTP 405)'),
      });
      expect(koerier.sent).toEqual(['https://ontvanger.example/hook']);
      const agreed = await koerier.create({ validation: 'agreed' });
      expect(agreed.status).toBe(403);
      expect(json(agreed)['type']).toMatch(/validation-agreement-not-allowed$/);
    }
  });
});
