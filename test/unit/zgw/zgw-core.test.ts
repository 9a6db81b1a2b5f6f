/**
 * Issue 34: the ZGW Notificaties API's rules in core — kenmerken against a kanaal's filters, the
 * abonnement filter match, the notificatie ↔ CloudEvent mapping, the HS256 client tokens, and
 * POST /notificaties handing the CloudEvent to the ingest.
 */
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { consistentWithKanaal, filtersMatch } from '../../../functions/core/zgw/zgw-filters.js';
import {
  cloudEventAsNotificatie,
  notificatieAsCloudEvent,
  notificatieIdempotencyKey,
} from '../../../functions/core/zgw/notificatie-mapping.js';
import {
  authenticateZgwClient,
  zgwScopes,
  type ZgwClients,
  type ZgwScope,
} from '../../../functions/core/zgw/zgw-tokens.js';
import { publishNotificatie } from '../../../functions/core/zgw/publish-notificatie.js';
import type { NotificatieEvent } from '../../../functions/core/zgw/notificatie-mapping.js';
import type { Notificatie } from '../../../functions/core/zgw/zgw-bodies.js';
import { asyncRefusalOf } from '../../support/refusals.js';
import { MemoryZgwStore } from '../../support/memory/memory-zgw-store.js';

const NOTIFICATIE: Notificatie = {
  kanaal: 'zaken',
  hoofdObject: 'https://openzaak.example/zaken/api/v1/zaken/5f3c1f1e-8c1a-4b0e-9d55-7f3d0c1b2a11',
  resource: 'status',
  resourceUrl: 'https://openzaak.example/zaken/api/v1/statussen/0b8e1c2d-3f4a-4b5c-8d6e-7f8091a2b3c4',
  actie: 'create',
  aanmaakdatum: '2026-11-29T10:15:00Z',
  kenmerken: { bronorganisatie: '002220647', zaaktype: 'https://catalogi.example/zaaktypen/1' },
};

describe('issue 34: kenmerken and filters as Open Notificaties relates them', () => {
  it('ZGW-3: kenmerken are consistent with a kanaal when their names are a subset or a superset of its filters', () => {
    expect(consistentWithKanaal(['bronorganisatie', 'zaaktype'], ['bronorganisatie'])).toBe(true);
    expect(consistentWithKanaal(['bronorganisatie', 'zaaktype'], ['bronorganisatie', 'zaaktype', 'x'])).toBe(true);
    expect(consistentWithKanaal(['bronorganisatie', 'zaaktype'], ['bronorganisatie', 'x'])).toBe(false);
    expect(consistentWithKanaal([], [])).toBe(true);
  });

  it("ZGW-4: an abonnement's filter matches on `*` or the same value, and ignores kenmerken the notificatie lacks", () => {
    expect(filtersMatch({ bronorganisatie: '*' }, { bronorganisatie: '1' })).toBe(true);
    expect(filtersMatch({ bronorganisatie: '1' }, { bronorganisatie: '1' })).toBe(true);
    expect(filtersMatch({ bronorganisatie: '2' }, { bronorganisatie: '1' })).toBe(false);
    expect(filtersMatch({ vertrouwelijkheid: 'geheim' }, { bronorganisatie: '1' })).toBe(true);
    expect(filtersMatch({ zaak_type: 'a' }, { zaakType: 'b' })).toBe(false);
  });
});

describe('issue 34: a notificatie is a CloudEvent', () => {
  it('ZGW-5: type nl.overheid.<kanaal>.<resource>.<actie>, the registered source, subject the resource id, time the aanmaakdatum, the whole notificatie in data', () => {
    const event = notificatieAsCloudEvent(NOTIFICATIE, 'openzaak', 'urn:nld:oin:00000001234567890000:openzaak');
    expect(event).toMatchObject({
      specversion: '1.0',
      type: 'nl.overheid.zaken.status.create',
      source: 'urn:nld:oin:00000001234567890000:openzaak',
      subject: '0b8e1c2d-3f4a-4b5c-8d6e-7f8091a2b3c4',
      time: '2026-11-29T10:15:00.000Z',
      datacontenttype: 'application/json',
    });
    expect(event.data.resourceUrl).toBe(NOTIFICATIE.resourceUrl);
    expect(event.data.hoofdObject).toBe(NOTIFICATIE.hoofdObject);
    expect(event.data.kenmerken).toEqual(NOTIFICATIE.kenmerken);
    expect(cloudEventAsNotificatie(event)).toEqual(NOTIFICATIE);
  });

  it('ZGW-5: the same notificatie from the same publisher is the same event (id and Idempotency-Key), another is not', () => {
    const first = notificatieAsCloudEvent(NOTIFICATIE, 'openzaak', 'urn:x');
    const again = notificatieAsCloudEvent({ ...NOTIFICATIE }, 'openzaak', 'urn:x');
    const other = notificatieAsCloudEvent({ ...NOTIFICATIE, actie: 'update' }, 'openzaak', 'urn:x');
    expect(again.id).toBe(first.id);
    expect(other.id).not.toBe(first.id);
    expect(notificatieIdempotencyKey('openzaak', NOTIFICATIE)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab]/);
  });

  it('ZGW-6: a CloudEvent published by others reaches notificatie subscribers only where the mapping allows it', () => {
    const foreign = {
      type: 'nl.overheid.zaken.zaak.update',
      source: 'urn:nld:oin:1:other',
      time: '2026-11-29T11:00:00Z',
      data: {
        resourceUrl: 'https://z.example/zaken/1',
        hoofdObject: 'https://z.example/zaken/1',
        kenmerken: { a: 'b', n: 1 },
      },
    };
    expect(cloudEventAsNotificatie(foreign)).toEqual({
      kanaal: 'zaken',
      source: 'urn:nld:oin:1:other',
      hoofdObject: 'https://z.example/zaken/1',
      resource: 'zaak',
      resourceUrl: 'https://z.example/zaken/1',
      actie: 'update',
      aanmaakdatum: '2026-11-29T11:00:00Z',
      kenmerken: { a: 'b' },
    });
    expect(cloudEventAsNotificatie({ ...foreign, type: 'nl.vng.zaken.zaak.update' })).toBeUndefined();
    expect(cloudEventAsNotificatie({ ...foreign, type: 'nl.overheid.zaken.zaak' })).toBeUndefined();
    expect(cloudEventAsNotificatie({ ...foreign, data: { resourceUrl: 'not a url' } })).toBeUndefined();
  });
});

const SECRET = 'een-gedeeld-geheim-van-open-zaak';
const NOW = Date.parse('2026-11-29T12:00:00Z');
const clients: ZgwClients = {
  find: (clientId) =>
    Promise.resolve(
      clientId === 'openzaak'
        ? { secret: SECRET, scopes: new Set([zgwScopes.publiceren]), source: 'urn:x:openzaak' }
        : undefined,
    ),
};
const settings = { maxTokenAgeSeconds: 3600, now: () => NOW };

function token(claims: Record<string, unknown>, secret = SECRET, alg = 'HS256') {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

async function refusal(authorization: string | undefined, scope: ZgwScope = zgwScopes.publiceren) {
  const error = await asyncRefusalOf(() => authenticateZgwClient(authorization, [scope], clients, settings));
  return { status: error.problem.status, code: error.problem['code'] };
}

describe('issue 34: ZGW clients authenticate with HS256 JWTs', () => {
  const iat = NOW / 1000 - 60;

  it('ZGW-2: a token signed with the shared secret, with client_id and a recent iat, is the client', async () => {
    const principal = await authenticateZgwClient(
      `Bearer ${await token({ iss: 'openzaak', client_id: 'openzaak', iat })}`,
      [zgwScopes.publiceren],
      clients,
      settings,
    );
    expect(principal.clientId).toBe('openzaak');
  });

  it('ZGW-2: wrong secret, expired token, missing scope, unknown client and no token are each the 403 Open Notificaties gives', async () => {
    expect(await refusal(`Bearer ${await token({ client_id: 'openzaak', iat }, 'een ander geheim')}`)).toEqual({
      status: 403,
      code: 'invalid-jwt-signature',
    });
    expect(await refusal(`Bearer ${await token({ client_id: 'openzaak', iat: NOW / 1000 - 3600 })}`)).toEqual({
      status: 403,
      code: 'jwt-expired',
    });
    expect(await refusal(`Bearer ${await token({ client_id: 'openzaak', iat })}`, zgwScopes.consumeren)).toEqual({
      status: 403,
      code: 'permission_denied',
    });
    expect(await refusal(`Bearer ${await token({ client_id: 'onbekend', iat })}`)).toEqual({
      status: 403,
      code: 'invalid-client-identifier',
    });
    expect(await refusal(`Bearer ${await token({ client_id: 'openzaak' })}`)).toEqual({
      status: 403,
      code: 'jwt-missing-iat-claim',
    });
    expect(await refusal(undefined)).toEqual({ status: 403, code: 'not_authenticated' });
  });

  it('ZGW-2: the maximum token age is a setting', async () => {
    const old = `Bearer ${await token({ client_id: 'openzaak', iat: NOW / 1000 - 600 })}`;
    await expect(
      authenticateZgwClient(old, [zgwScopes.publiceren], clients, { ...settings, maxTokenAgeSeconds: 7200 }),
    ).resolves.toMatchObject({ clientId: 'openzaak' });
    const error = await asyncRefusalOf(() =>
      authenticateZgwClient(old, [zgwScopes.publiceren], clients, { ...settings, maxTokenAgeSeconds: 300 }),
    );
    expect(error.problem['code']).toBe('jwt-expired');
  });
});

describe('issue 34: POST /notificaties', () => {
  const principal = {
    clientId: 'openzaak',
    client: { secret: SECRET, scopes: new Set([zgwScopes.publiceren]), source: 'urn:x:openzaak' },
  };

  async function context() {
    const store = new MemoryZgwStore();
    await store.createKanaal({
      uuid: '1',
      naam: 'zaken',
      documentatieLink: '',
      filters: ['bronorganisatie', 'zaaktype'],
    });
    const ingested: { event: NotificatieEvent; key: string; publisher: string }[] = [];
    const ingest = (event: object, key: string, publisher: string) => {
      ingested.push({ event: event as NotificatieEvent, key, publisher });
      return Promise.resolve();
    };
    return { store, ingest, ingested };
  }

  it('ZGW-3: a valid notificatie becomes a CloudEvent through the ingest, and is answered 201 with itself', async () => {
    const ctx = await context();
    const answer = await publishNotificatie(ctx, principal, Buffer.from(JSON.stringify(NOTIFICATIE)));
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toEqual(NOTIFICATIE);
    expect(ctx.ingested).toHaveLength(1);
    expect(ctx.ingested[0]!.event.type).toBe('nl.overheid.zaken.status.create');
    expect(ctx.ingested[0]!.publisher).toBe('openzaak');
  });

  it('ZGW-3: an unknown kanaal and kenmerken outside the filters are the ValidatieFout Open Notificaties gives, and nothing is ingested', async () => {
    const ctx = await context();
    const unknown = await asyncRefusalOf(() =>
      publishNotificatie(ctx, principal, Buffer.from(JSON.stringify({ ...NOTIFICATIE, kanaal: 'onbekend' }))),
    );
    expect(unknown.problem).toMatchObject({ status: 400, invalidParams: [{ name: 'kanaal', code: 'message_kanaal' }] });
    const outside = await asyncRefusalOf(() =>
      publishNotificatie(
        ctx,
        principal,
        Buffer.from(JSON.stringify({ ...NOTIFICATIE, kenmerken: { bronorganisatie: '1', vreemd: 'x' } })),
      ),
    );
    expect(outside.problem).toMatchObject({
      status: 400,
      invalidParams: [{ name: 'kenmerken', code: 'kenmerken_inconsistent' }],
    });
    const missing = await asyncRefusalOf(() =>
      publishNotificatie(ctx, principal, Buffer.from(JSON.stringify({ ...NOTIFICATIE, actie: undefined }))),
    );
    expect(missing.problem).toMatchObject({ status: 400, invalidParams: [{ name: 'actie', code: 'required' }] });
    expect(ctx.ingested).toHaveLength(0);
  });
});
