/**
 * Issue 34 on the laptop host: the ZGW Notificaties API under /zgw/api/v1, played as Open Zaak
 * plays it. An HS256 client (its secret set write-only through the partners admin API) makes a
 * kanaal and publishes 100 notificaties; a CloudEvents pull subscriber receives the same 100 as
 * CloudEvents that pass the NL GOV profile validation; a ZGW consumer makes an abonnement after
 * Open Notificaties' callback checks; wrong secret, expired token, missing scope, unknown kanaal
 * and kenmerken outside the filters are answered as Open Notificaties answers them. Every request
 * to the adapter and every answer is validated against Open Notificaties' own OpenAPI document
 * with openapi-backend (skipped, saying so, when the document is not on this machine).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { validateEventObject } from '../../functions/core/cloudevents/index.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';
import {
  exchangeValidator,
  MISSING_DOCUMENT_NOTE,
  notificatieSchemaCheck,
  openNotificatiesDocumentPath,
  type ExchangeValidator,
} from '../support/open-notificaties-document.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:openzaak';
const OPENZAAK_SECRET = 'open-zaak-deelt-dit-geheim';
const ZAC_SECRET = 'de-zaakafhandelcomponent-deelt-dit';
const ZGW = '/zgw/api/v1';

let koerier: TestHost;
let validator: ExchangeValidator | undefined;
let callback: Server;
let callbackUrl: string;
const callbackCalls: {
  authorization: string | undefined;
  body: unknown;
  status: number;
  url?: string | undefined;
  contentType?: string | undefined;
}[] = [];
/** The notificatie (by its hoofdObject) the consumer refuses with 400 while this is set: the one to dead-letter and redrive. */
let refused: string | undefined;
const validated: string[] = [];

beforeAll(async () => {
  koerier = await startTestHost({
    [settingEnv.partnersRefreshSeconds]: '1',
    [settingEnv.publishers]: JSON.stringify({ 'dev-publisher': ['urn:nld:oin:0001'], openzaak: [SOURCE] }),
    [settingEnv.entitlements]: JSON.stringify({
      'dev-subscriber': [{ typePrefix: 'nl.overheid.' }],
      zac: [{ typePrefix: 'nl.overheid.' }],
    }),
  });
  const admin = await koerier.host.issueToken('ops', ['admin']);
  for (const [clientId, body] of [
    ['openzaak', { publishGrants: [SOURCE], zgwSecret: OPENZAAK_SECRET }],
    ['zac', { entitlements: [{ typePrefix: 'nl.overheid.' }], zgwSecret: ZAC_SECRET }],
  ] as const) {
    const put = await callApi(koerier.url, admin, 'PUT', `/clients/${clientId}`, body);
    expect(put.status, put.text).toBeLessThan(300);
    expect(put.text).not.toContain(body.zgwSecret);
  }
  // A consumer's endpoint as Open Notificaties expects one: it refuses a call without its auth.
  callback = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text || 'null') as { hoofdObject?: string } | null;
      const status =
        req.headers.authorization !== 'Token zac-callback-geheim'
          ? 403
          : refused !== undefined && body?.hoofdObject === refused
            ? 400
            : 204;
      const { authorization, 'content-type': contentType } = req.headers;
      callbackCalls.push({ authorization, body, status, url: req.url, contentType });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/api/v1/callbacks`;
  const documentPath = openNotificatiesDocumentPath();
  if (documentPath === undefined) console.warn(MISSING_DOCUMENT_NOTE);
  else validator = await exchangeValidator(documentPath, ZGW);
  // Give the functions' copy of the directory (1 s here) time to see the secrets.
  await new Promise((resolve) => setTimeout(resolve, 1200));
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => callback?.close(resolve));
  await koerier?.stop();
});

function zgwToken(clientId: string, secret: string, iat = Math.floor(Date.now() / 1000)) {
  return new SignJWT({ iss: clientId, client_id: clientId, iat, user_id: '', user_representation: '' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(secret));
}

/** One call to the adapter as a ZGW client makes it; request and answer checked against Open Notificaties' document. */
async function zgw(method: string, path: string, token: string, body?: unknown) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    accept: 'application/json',
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  };
  const [pathname, search] = path.split('?');
  const response = await fetch(`${koerier.origin}${ZGW}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json: unknown = text === '' ? undefined : JSON.parse(text);
  validator?.check(
    {
      method,
      path: `${ZGW}${pathname!}`,
      headers,
      body,
      query: Object.fromEntries(new URLSearchParams(search ?? '')),
    },
    // openapi-backend checks an answer without content (their 204) as JSON null.
    { status: response.status, body: text === '' ? null : json },
  );
  if (validator) validated.push(`${method} ${pathname} ${response.status}`);
  return { status: response.status, body: json as Record<string, unknown> & unknown[] };
}

const notificatie = (n: number) => ({
  kanaal: 'zaken',
  hoofdObject: `https://openzaak.example/zaken/api/v1/zaken/00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  resource: 'zaak',
  resourceUrl: `https://openzaak.example/zaken/api/v1/zaken/00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  actie: 'create',
  aanmaakdatum: new Date(Date.UTC(2026, 10, 29, 9, 0, n)).toISOString(),
  kenmerken: { bronorganisatie: '002220647', zaaktype: 'https://catalogi.example/zaaktypen/1' },
});

describe('issue 34: the ZGW Notificaties API on the laptop host, played as Open Zaak', () => {
  let openzaak: string;
  let zac: string;
  let abonnementUuid: string;

  beforeAll(async () => {
    openzaak = await zgwToken('openzaak', OPENZAAK_SECRET);
    zac = await zgwToken('zac', ZAC_SECRET);
  });

  it('ZGW-1: a kanaal is made, listed, found by name and read, in the ZGW resource shape', async () => {
    const created = await zgw('POST', '/kanaal', openzaak, {
      naam: 'zaken',
      documentatieLink: 'https://zaken.example/kanaal',
      filters: ['bronorganisatie', 'zaaktype', 'vertrouwelijkheidaanduiding'],
    });
    expect(created.status).toBe(201);
    expect(created.body['url']).toMatch(new RegExp(`${ZGW}/kanaal/[0-9a-f-]{36}$`));
    const again = await zgw('POST', '/kanaal', openzaak, { naam: 'zaken' });
    expect(again.status).toBe(400);
    expect(again.body['invalidParams']).toEqual([expect.objectContaining({ name: 'naam', code: 'unique' })]);
    const listed = await zgw('GET', '/kanaal?naam=zaken', zac);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([created.body]);
    const uuid = String(created.body['url']).split('/').at(-1)!;
    expect((await zgw('GET', `/kanaal/${uuid}`, zac)).body).toEqual(created.body);
    expect((await zgw('GET', '/kanaal/00000000-0000-4000-8000-000000000000', zac)).status).toBe(404);
  });

  it('ZGW-2: wrong secret, expired token and missing scope are each the 403 Open Notificaties gives', async () => {
    const wrong = await zgw('GET', '/kanaal', await zgwToken('openzaak', 'niet-het-geheim'));
    expect([wrong.status, wrong.body['code']]).toEqual([403, 'invalid-jwt-signature']);
    const expired = await zgw(
      'GET',
      '/kanaal',
      await zgwToken('openzaak', OPENZAAK_SECRET, Math.floor(Date.now() / 1000) - 3700),
    );
    expect([expired.status, expired.body['code']]).toEqual([403, 'jwt-expired']);
    const scope = await zgw('POST', '/kanaal', zac, { naam: 'niet-van-zac' });
    expect([scope.status, scope.body['code']]).toEqual([403, 'permission_denied']);
    const publishAsConsumer = await zgw('POST', '/notificaties', zac, notificatie(0));
    expect([publishAsConsumer.status, publishAsConsumer.body['code']]).toEqual([403, 'permission_denied']);
  });

  it("ZGW-4: an abonnement is made after Open Notificaties' callback checks (refused without auth, taken with it); auth is never answered", async () => {
    const open = await zgw('POST', '/abonnement', zac, { callbackUrl: `${callbackUrl}?open`, auth: '', kanalen: [] });
    expect(open.status).toBe(400);
    const created = await zgw('POST', '/abonnement', zac, {
      callbackUrl,
      auth: 'Token zac-callback-geheim',
      kanalen: [{ naam: 'zaken', filters: { bronorganisatie: '002220647' } }],
    });
    expect(created.status).toBe(201);
    abonnementUuid = String(created.body['url']).split('/').at(-1)!;
    expect(JSON.stringify(created.body)).not.toContain('zac-callback-geheim');
    const checks = callbackCalls.filter((call) => call.body && (call.body as { kanaal: string }).kanaal === 'test');
    expect(checks.map((check) => check.authorization)).toEqual(
      expect.arrayContaining([undefined, 'Token zac-callback-geheim']),
    );
    const unknownKanaal = await zgw('POST', '/abonnement', zac, {
      callbackUrl,
      auth: 'Token zac-callback-geheim',
      kanalen: [{ naam: 'bestaat-niet' }],
    });
    expect(unknownKanaal.body['invalidParams']).toEqual([expect.objectContaining({ code: 'kanaal_naam' })]);
    const listed = await zgw('GET', '/abonnement', openzaak);
    expect(listed.body).toEqual([created.body]);
  });

  it('ZGW-3: an unknown kanaal and kenmerken outside the filters are the ValidatieFout Open Notificaties gives', async () => {
    const unknown = await zgw('POST', '/notificaties', openzaak, { ...notificatie(1), kanaal: 'onbekend' });
    expect(unknown.status).toBe(400);
    expect(unknown.body['invalidParams']).toEqual([
      expect.objectContaining({ name: 'kanaal', code: 'message_kanaal' }),
    ]);
    const outside = await zgw('POST', '/notificaties', openzaak, {
      ...notificatie(1),
      kenmerken: { bronorganisatie: '1', iets: 'anders' },
    });
    expect(outside.status).toBe(400);
    expect(outside.body['invalidParams']).toEqual([
      expect.objectContaining({ name: 'kenmerken', code: 'kenmerken_inconsistent' }),
    ]);
  });

  let published100 = false;
  beforeAll(() => {
    // Issue 34 item 4: the consumer refuses notificatie 50 until the test below redrives it.
    refused = notificatie(50).hoofdObject;
  });

  it('ZGW-5: 100 notificaties reach a CloudEvents pull subscriber as 100 CloudEvents that pass the NL GOV profile validation', async () => {
    const subscriber = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
    const subscription = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      delivery: 'pull',
      types: ['nl.overheid.zaken.zaak.create'],
    });
    expect(subscription.status, subscription.text).toBe(201);
    for (let n = 1; n <= 100; n++) {
      const published = await zgw('POST', '/notificaties', openzaak, notificatie(n));
      expect(published.status).toBe(201);
      expect(published.body).toEqual(notificatie(n));
    }
    published100 = true;
    const events = new Map<string, Record<string, unknown>>();
    const deadline = Date.now() + 60_000;
    while (events.size < 100 && Date.now() < deadline) {
      const answer = await callApi(
        koerier.url,
        subscriber,
        'POST',
        `/subscriptions/${String(subscription.body['id'])}/events/receive`,
        {
          maxevents: 100,
          waitseconds: 5,
          lockseconds: 300,
        },
      );
      for (const event of (answer.body['events'] ?? []) as Record<string, unknown>[])
        events.set(String(event['id']), event);
    }
    expect(events.size).toBe(100);
    for (const event of events.values()) {
      expect(validateEventObject(event).errors).toEqual([]);
      expect(event).toMatchObject({ type: 'nl.overheid.zaken.zaak.create', source: SOURCE });
    }
    const first = [...events.values()].find((event) => event['time'] === '2026-11-29T09:00:01.000Z');
    expect(first?.['subject']).toBe('00000000-0000-4000-8000-000000000001');
    expect(first?.['data']).toEqual(notificatie(1));
  }, 180_000);

  it("ZGW-4: the ZGW consumer's abonnement receives all 100 notificaties in the ZGW shape with its auth; the one it refused is dead-lettered and redriven", async () => {
    expect(published100).toBe(true);
    const delivered = (status: number) =>
      callbackCalls.filter((call) => call.status === status && (call.body as { kanaal?: string }).kanaal === 'zaken');
    const deadline = Date.now() + 60_000;
    while (delivered(204).length < 99 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(delivered(204)).toHaveLength(99);
    expect(delivered(400).map((call) => call.body)).toEqual([notificatie(50)]);

    // The refusal is a dead letter of the abonnement's subscription, listed and redriven by the consumer through Koerier's API.
    const consumer = await koerier.host.issueToken('zac', ['subscriptions:manage']);
    let deadLetters: { reason: string; events: { id: string }[] }[] = [];
    while (deadLetters.length === 0 && Date.now() < deadline) {
      const listed = await callApi(koerier.url, consumer, 'GET', `/subscriptions/${abonnementUuid}/dead-letters`);
      deadLetters = (listed.body['deadLetters'] ?? []) as typeof deadLetters;
      if (deadLetters.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect(deadLetters).toEqual([expect.objectContaining({ reason: 'rejected' })]);
    refused = undefined;
    const redrive = await callApi(
      koerier.url,
      consumer,
      'POST',
      `/subscriptions/${abonnementUuid}/dead-letters/redrive`,
      {
        all: true,
      },
    );
    expect(redrive.status, redrive.text).toBe(202);
    while (delivered(204).length < 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));

    const bodies = delivered(204).map((call) => call.body);
    expect(bodies).toHaveLength(100);
    for (let n = 1; n <= 100; n++) expect(bodies).toContainEqual(notificatie(n));
    expect(new Set(delivered(204).map((call) => call.authorization))).toEqual(new Set(['Token zac-callback-geheim']));
    const documentPath = openNotificatiesDocumentPath();
    if (documentPath === undefined) console.warn(MISSING_DOCUMENT_NOTE);
    else {
      const check = notificatieSchemaCheck(documentPath);
      for (const body of bodies) expect(check(body)).toEqual([]);
    }
  }, 120_000);

  it('ZGW-4: deleting the abonnement removes its subscription', async () => {
    const consumer = await koerier.host.issueToken('zac', ['subscriptions:manage']);
    expect((await callApi(koerier.url, consumer, 'GET', `/subscriptions/${abonnementUuid}`)).status).toBe(200);
    expect((await zgw('DELETE', `/abonnement/${abonnementUuid}`, zac)).status).toBe(204);
    expect((await callApi(koerier.url, consumer, 'GET', `/subscriptions/${abonnementUuid}`)).status).toBe(404);
  });

  it('ZGW-1: every call above was validated against Open Notificaties’ OpenAPI document', () => {
    if (validator === undefined) {
      console.warn(MISSING_DOCUMENT_NOTE);
      return;
    }
    expect(validated.length).toBeGreaterThan(100);
  });
});

describe("issue 34: an abonnement's filters, sendCloudevents and its guarded subscription, on the laptop host", () => {
  let openzaak: string;
  let zac: string;
  const AUTH = 'Token zac-callback-geheim';
  const uuids: Record<string, string> = {};
  const BRON = '111111111';
  const at = (path: string) =>
    callbackCalls.filter((call) => call.url === `/api/v1/callbacks/${path}` && call.status === 204);
  const notificaties = (path: string) =>
    at(path)
      .map((call) => call.body as { kanaal?: string; hoofdObject?: string })
      .filter((body) => body.kanaal === 'zaken');
  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 30_000;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  };
  const abonneer = async (path: string, body: Record<string, unknown>) => {
    const created = await zgw('POST', '/abonnement', zac, {
      callbackUrl: `${callbackUrl}/${path}`,
      auth: AUTH,
      ...body,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    uuids[path] = String(created.body['url']).split('/').at(-1)!;
  };

  beforeAll(async () => {
    openzaak = await zgwToken('openzaak', OPENZAAK_SECRET);
    zac = await zgwToken('zac', ZAC_SECRET);
  });

  it("ZGW-8: a notificatie whose kenmerken the abonnement's filters refuse is not delivered to it, and is neither a delivery nor a dead letter of it", async () => {
    await abonneer('gefilterd', { kanalen: [{ naam: 'zaken', filters: { bronorganisatie: BRON } }] });
    await abonneer('alles', { kanalen: [{ naam: 'zaken' }] });
    const wanted = { ...notificatie(201), kenmerken: { bronorganisatie: BRON } };
    for (const published of [wanted, notificatie(202)])
      expect((await zgw('POST', '/notificaties', openzaak, published)).status).toBe(201);
    await until(() => notificaties('alles').length === 2 && notificaties('gefilterd').length === 1);
    expect(notificaties('alles')).toEqual(expect.arrayContaining([wanted, notificatie(202)]));
    // Both were routed by now (the other abonnement has both): give a wrong delivery a moment to show.
    await new Promise((r) => setTimeout(r, 1000));
    expect(notificaties('gefilterd')).toEqual([wanted]);
    expect(at('gefilterd').map((call) => call.authorization)).toContain(AUTH);

    const consumer = await koerier.host.issueToken('zac', ['subscriptions:manage']);
    const deliveries = await callApi(koerier.url, consumer, 'GET', `/subscriptions/${uuids['gefilterd']!}/deliveries`);
    expect(deliveries.status, deliveries.text).toBe(200);
    expect(deliveries.text).not.toContain(notificatie(202).hoofdObject.split('/').at(-1));
    expect((deliveries.body['attempts'] as unknown[]).length).toBe(1);
    const deadLetters = await callApi(
      koerier.url,
      consumer,
      'GET',
      `/subscriptions/${uuids['gefilterd']!}/dead-letters`,
    );
    expect(deadLetters.body['deadLetters']).toEqual([]);
  }, 60_000);

  it('ZGW-9: an abonnement with sendCloudevents receives the CloudEvent (NL GOV profile) with its auth; cloudeventFilters are refused, pointing to /v1/subscriptions', async () => {
    await abonneer('cloudevents', {
      kanalen: [{ naam: 'zaken', filters: { bronorganisatie: BRON } }],
      sendCloudevents: true,
    });
    const wanted = { ...notificatie(203), kenmerken: { bronorganisatie: BRON } };
    expect((await zgw('POST', '/notificaties', openzaak, wanted)).status).toBe(201);
    expect((await zgw('POST', '/notificaties', openzaak, notificatie(204))).status).toBe(201);
    const events = () => at('cloudevents').filter((call) => (call.body as { type?: string }).type !== undefined);
    await until(() => events().length > 0 && notificaties('alles').length >= 4);
    const [delivered, ...more] = events();
    expect(more).toEqual([]);
    expect(delivered?.authorization).toBe(AUTH);
    expect(delivered?.contentType).toMatch(/^application\/cloudevents\+json/);
    expect(validateEventObject(delivered?.body as Record<string, unknown>).errors).toEqual([]);
    expect(delivered?.body).toMatchObject({ type: 'nl.overheid.zaken.zaak.create', source: SOURCE, data: wanted });

    const refused = await zgw('POST', '/abonnement', zac, {
      callbackUrl: `${callbackUrl}/cloudevents`,
      auth: AUTH,
      kanalen: [{ naam: 'zaken' }],
      sendCloudevents: true,
      cloudeventFilters: [{ typeSubstring: 'zaak' }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body['invalidParams']).toEqual([
      expect.objectContaining({ name: 'cloudeventFilters', code: 'cloudevent-filters-not-supported' }),
    ]);
    expect(JSON.stringify(refused.body)).toContain('/v1/subscriptions');
  }, 60_000);

  it('ZGW-8: a notificatie of more than 64 KiB (its data in the claim check) is filtered on its kenmerken all the same, and reaches the abonnementen that take it whole', async () => {
    // Over the claim check's 64 KiB (70 kenmerken of 1,000 characters, each at its maximum length):
    // the router sees a dataref, not the data with its kenmerken.
    const extra = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`toelichting${i}`, 'v'.repeat(1000)]));
    const large = (n: number, bronorganisatie: string) => ({
      ...notificatie(n),
      kenmerken: { ...notificatie(n).kenmerken, bronorganisatie, vertrouwelijkheidaanduiding: 'openbaar', ...extra },
    });
    const before = { alles: notificaties('alles').length, gefilterd: notificaties('gefilterd').length };
    for (const published of [large(205, BRON), large(206, '222222222')])
      expect((await zgw('POST', '/notificaties', openzaak, published)).status).toBe(201);
    await until(
      () =>
        notificaties('alles').length === before.alles + 2 && notificaties('gefilterd').length === before.gefilterd + 1,
    );
    expect(notificaties('alles').slice(before.alles)).toEqual(
      expect.arrayContaining([large(205, BRON), large(206, '222222222')]),
    );
    // Both were routed by now (the other abonnement has both): give a wrong delivery a moment to show.
    await new Promise((r) => setTimeout(r, 1000));
    expect(notificaties('gefilterd').slice(before.gefilterd)).toEqual([large(205, BRON)]);
  }, 60_000);

  it('ZGW-10: the subscription behind an abonnement is read through /v1/subscriptions but not changed or deleted there (409 pointing to the abonnement)', async () => {
    const consumer = await koerier.host.issueToken('zac', ['subscriptions:manage']);
    const uuid = uuids['gefilterd']!;
    const read = await callApi(koerier.url, consumer, 'GET', `/subscriptions/${uuid}`);
    expect(read.status).toBe(200);
    for (const [method, body] of [
      ['PATCH', { sink: `${callbackUrl}/elders` }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await callApi(koerier.url, consumer, method, `/subscriptions/${uuid}`, body);
      expect(refused.status, refused.text).toBe(409);
      expect(String(refused.body['type'])).toMatch(/\/subscription-of-abonnement$/);
      expect(refused.body['abonnement']).toBe(`${ZGW}/abonnement/${uuid}`);
    }
    const admin = await koerier.host.issueToken('ops', ['admin', 'subscriptions:manage']);
    expect((await callApi(koerier.url, admin, 'DELETE', `/subscriptions/${uuid}`)).status).toBe(409);
    expect((await callApi(koerier.url, consumer, 'GET', `/subscriptions/${uuid}`)).body['sink']).toBe(
      `${callbackUrl}/gefilterd`,
    );
    for (const path of Object.keys(uuids))
      expect((await zgw('DELETE', `/abonnement/${uuids[path]!}`, zac)).status).toBe(204);
    expect((await callApi(koerier.url, consumer, 'GET', `/subscriptions/${uuid}`)).status).toBe(404);
  });
});
