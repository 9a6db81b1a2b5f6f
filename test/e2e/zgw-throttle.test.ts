/**
 * Issue 34: the per-client throttle of Koerier's other APIs (functions/app/client-throttling.ts)
 * on the ZGW routes, on the laptop host with a manage rate of 4 a minute: the fifth management call
 * of a client within the minute is a 429 ZGW `Fout` with Retry-After, while its notificaties take
 * from its publish bucket and still go through. Answers are checked against Open Notificaties'
 * OpenAPI document when it is on this machine.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';
import {
  exchangeValidator,
  MISSING_DOCUMENT_NOTE,
  openNotificatiesDocumentPath,
  type ExchangeValidator,
} from '../support/open-notificaties-document.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:openzaak';
const SECRET = 'open-zaak-deelt-dit-geheim';
const ZGW = '/zgw/api/v1';

let koerier: TestHost;
let validator: ExchangeValidator | undefined;

beforeAll(async () => {
  koerier = await startTestHost({
    [settingEnv.partnersRefreshSeconds]: '1',
    [settingEnv.manageRatePerMinute]: '4',
    [settingEnv.publishers]: JSON.stringify({ openzaak: [SOURCE] }),
  });
  const admin = await koerier.host.issueToken('ops', ['admin']);
  const put = await callApi(koerier.url, admin, 'PUT', '/clients/openzaak', {
    publishGrants: [SOURCE],
    zgwSecret: SECRET,
  });
  expect(put.status, put.text).toBeLessThan(300);
  const documentPath = openNotificatiesDocumentPath();
  if (documentPath === undefined) console.warn(MISSING_DOCUMENT_NOTE);
  else validator = await exchangeValidator(documentPath, ZGW);
  await new Promise((resolve) => setTimeout(resolve, 1200));
}, 60_000);

afterAll(async () => {
  await koerier?.stop();
});

async function zgw(method: string, path: string, body?: unknown) {
  const token = await new SignJWT({ iss: 'openzaak', client_id: 'openzaak', iat: Math.floor(Date.now() / 1000) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(SECRET));
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    accept: 'application/json',
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  };
  const response = await fetch(`${koerier.origin}${ZGW}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = (text === '' ? undefined : JSON.parse(text)) as Record<string, unknown>;
  validator?.check(
    { method, path: `${ZGW}${path}`, headers, body, query: {} },
    { status: response.status, body: json },
  );
  return { status: response.status, body: json, retryAfter: response.headers.get('retry-after') };
}

describe('issue 34: the per-client throttle on the ZGW routes', () => {
  it('ZGW-11: the fifth management call in a minute is a 429 ZGW Fout with Retry-After; the client still publishes notificaties', async () => {
    expect(
      (
        await zgw('POST', '/kanaal', {
          naam: 'zaken',
          documentatieLink: 'https://zaken.example/kanaal',
          filters: ['bronorganisatie'],
        })
      ).status,
    ).toBe(201);
    for (let n = 0; n < 3; n++) expect((await zgw('GET', '/kanaal')).status).toBe(200);
    const throttled = await zgw('GET', '/kanaal');
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({ status: 429, code: 'rate-limited' });
    expect(throttled.body['instance']).toMatch(/^urn:uuid:/);
    expect(Number(throttled.retryAfter)).toBeGreaterThan(0);

    const published = await zgw('POST', '/notificaties', {
      kanaal: 'zaken',
      hoofdObject: 'https://openzaak.example/zaken/api/v1/zaken/1',
      resource: 'zaak',
      resourceUrl: 'https://openzaak.example/zaken/api/v1/zaken/1',
      actie: 'create',
      aanmaakdatum: '2026-11-29T09:00:00Z',
      kenmerken: { bronorganisatie: '002220647' },
    });
    expect(published.status).toBe(201);
  });
});
