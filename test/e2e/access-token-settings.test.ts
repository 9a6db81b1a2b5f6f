/**
 * The access-token settings (review #17) end to end on the laptop host, set up like an Entra ID
 * deployment: typ `JWT`, the client in `azp`, the scopes in `roles`, a 10-minute cap. They must reach the handlers (the
 * ingest refuses what they refuse) and the development identity (its tokens pass them).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, KoerierProblem, publishEvent, publishEvents } from '../support/koerier-api.js';

let koerier: TestHost;
let signingKey: CryptoKey;
let kid: string;

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.accessTokenType]: 'JWT',
      [settingEnv.clientIdClaim]: 'azp',
      [settingEnv.accessTokenMaxLifetimeSeconds]: '600',
      [settingEnv.scopeClaims]: 'roles',
    },
    { queueTriggers: false },
  );
  // The host's own development key, so the claims are all that differ.
  const jwk = JSON.parse(
    await readFile(join(koerier.host.configFile, '..', 'state', 'dev-signing-key.json'), 'utf8'),
  ) as JWK;
  signingKey = (await importJWK(jwk, 'ES256')) as CryptoKey;
  kid = ((await (await fetch(`${koerier.origin}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] })
    .keys[0]!.kid;
});

afterAll(async () => {
  await koerier?.stop();
});

const now = () => Math.floor(Date.now() / 1000);

const EVENT = { source: 'urn:nld:oin:00000001823288444000:systeem:lvs', type: 'nl.edu.leerling.ingeschreven' };

const newEvent = () => ({ specversion: '1.0', id: randomUUID(), ...EVENT });

/** A client calling with `token` and no retries: a refused token is the answer to see, not to renew. */
const calling = (token: string) => apiAs(koerier.url, token, { retries: 0 });

/** The refusal of a call, which must be refused. */
async function refusalOf(call: Promise<unknown>): Promise<KoerierProblem> {
  const refusal = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(refusal).toBeInstanceOf(KoerierProblem);
  return refusal as KoerierProblem;
}

function forge(claims: Record<string, unknown>, lifetimeSeconds = 300) {
  return new SignJWT({ roles: ['events:publish'], ...claims })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
    .setIssuer(koerier.origin)
    .setAudience('koerier')
    .setIssuedAt(now() - 10)
    .setExpirationTime(now() - 10 + lifetimeSeconds)
    .sign(signingKey);
}

async function expectInvalidToken(token: string, description: RegExp) {
  const refusal = await refusalOf(publishEvent(calling(token), EVENT));
  expect(refusal.status).toBe(401);
  expect(refusal.headers.get('content-type')).toBe('application/problem+json');
  expect(refusal.headers.get('www-authenticate')).toContain('error="invalid_token"');
  expect(refusal.detail).toMatch(description);
}

describe('access-token settings on the laptop host (EDU-2, EDU-4, review #17)', () => {
  it('EDU-2, review #17: the development identity issues typ JWT tokens with azp and a lifetime within the cap, and the ingest accepts them', async () => {
    const token = await koerier.token('dev-publisher', ['events:publish']);
    expect(decodeProtectedHeader(token).typ).toBe('JWT');
    const claims = decodeJwt(token);
    expect(claims['azp']).toBe('dev-publisher');
    expect(claims['roles']).toEqual(['events:publish']);
    expect(claims.exp! - claims.iat!).toBe(600);
    expect((await publishEvents(calling(token), newEvent())).response.status).toBe(202);
  });

  it('EDU-4, review #17: the handlers read the configured claim: client_id (or sub) without azp → 401 invalid_token', async () => {
    await expectInvalidToken(
      await forge({ client_id: 'dev-publisher', sub: 'dev-publisher' }),
      /names no client.*"azp"/,
    );
  });

  it('EDU-4, review #17: the handlers read the configured cap: 601 s of exp - iat → 401 invalid_token', async () => {
    await expectInvalidToken(await forge({ azp: 'dev-publisher' }, 601), /lives too long.*600/);
    const lastingTheCap = await forge({ azp: 'dev-publisher' }, 600);
    expect((await publishEvents(calling(lastingTheCap), newEvent())).response.status).toBe(202);
  });

  it('EDU-4, issue 12 item 2: with the scopes configured in roles, a scope claim grants nothing: 403 insufficient_scope', async () => {
    const token = await forge({ azp: 'dev-publisher', roles: undefined, scope: 'events:publish' });
    const refusal = await refusalOf(publishEvent(calling(token), EVENT));
    expect(refusal.status).toBe(403);
    expect(refusal.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });
});
