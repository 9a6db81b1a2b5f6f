import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { authenticate, scopes, type TokenVerification } from '../../../functions/core/auth/access-tokens.js';
import { ProblemError } from '../../../functions/core/http/problems.js';

const ISSUER = 'https://login.example.org';
const AUDIENCE = 'koerier';

let verification: TokenVerification;
let privateKey: CryptoKey;
let otherPrivateKey: CryptoKey;
let publicJwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  otherPrivateKey = (await generateKeyPair('ES256')).privateKey;
  verification = { keys: createLocalJWKSet({ keys: [publicJwk] }), issuer: ISSUER, audience: AUDIENCE };
});

function token(claims: Record<string, unknown> = {}, options: { key?: CryptoKey; iss?: string; aud?: string; exp?: number | string; nbf?: number } = {}) {
  const jwt = new SignJWT({ client_id: 'dev-publisher', scope: 'events:publish subscriptions:manage', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.exp ?? '5m');
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign(options.key ?? privateKey);
}

async function rejection(authorization: string | undefined, scope = scopes.publish): Promise<ProblemError> {
  try {
    await authenticate(authorization, scope, verification);
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected the token to be rejected');
}

const now = () => Math.floor(Date.now() / 1000);

describe('access tokens (EDU-2, EDU-4)', () => {
  it('EDU-2: a valid client-credentials token yields the client and its scopes', async () => {
    const principal = await authenticate(`Bearer ${await token()}`, scopes.publish, verification);
    expect(principal.clientId).toBe('dev-publisher');
    expect([...principal.scopes]).toEqual(['events:publish', 'subscriptions:manage']);
  });

  it('EDU-2: the client falls back from client_id to azp to sub, and `scp` arrays are read', async () => {
    const viaAzp = await authenticate(`Bearer ${await token({ client_id: undefined, azp: 'azp-client' })}`, scopes.publish, verification);
    expect(viaAzp.clientId).toBe('azp-client');
    const viaSub = await authenticate(`Bearer ${await token({ client_id: undefined, sub: 'sub-client', scope: undefined, scp: ['events:publish'] })}`, scopes.publish, verification);
    expect(viaSub.clientId).toBe('sub-client');
  });

  it('EDU-4: a missing Authorization header gets 401 with WWW-Authenticate: Bearer error="invalid_token"', async () => {
    const error = await rejection(undefined);
    expect(error.problem.status).toBe(401);
    expect(error.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
  });

  it('EDU-4: a non-Bearer scheme gets 401', async () => {
    expect((await rejection('Basic ZGV2OnNlY3JldA==')).problem.status).toBe(401);
  });

  it('EDU-4: an expired token gets 401 saying so', async () => {
    const error = await rejection(`Bearer ${await token({}, { exp: now() - 120 })}`);
    expect(error.problem.status).toBe(401);
    expect(error.problem.detail).toMatch(/expired/);
  });

  it('EDU-4: up to 60 s of clock skew on exp is tolerated, more is not', async () => {
    await expect(authenticate(`Bearer ${await token({}, { exp: now() - 30 })}`, scopes.publish, verification)).resolves.toBeTruthy();
    expect((await rejection(`Bearer ${await token({}, { exp: now() - 90 })}`)).problem.status).toBe(401);
  });

  it('EDU-4: a token not valid yet (nbf beyond the skew) gets 401', async () => {
    const error = await rejection(`Bearer ${await token({}, { nbf: now() + 300 })}`);
    expect(error.problem.detail).toMatch(/not valid yet/);
  });

  it('EDU-4: a token for another audience gets 401', async () => {
    const error = await rejection(`Bearer ${await token({}, { aud: 'someone-else' })}`);
    expect(error.problem.status).toBe(401);
    expect(error.problem.detail).toMatch(/audience/);
  });

  it('EDU-4: a token from another issuer gets 401', async () => {
    const error = await rejection(`Bearer ${await token({}, { iss: 'https://evil.example' })}`);
    expect(error.problem.detail).toMatch(/issuer/);
  });

  it('EDU-4: an unsigned token (alg: none) gets 401', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, client_id: 'x', scope: 'events:publish', exp: now() + 300 })).toString('base64url');
    expect((await rejection(`Bearer ${header}.${body}.`)).problem.status).toBe(401);
  });

  it('EDU-4: an HMAC token keyed with the public key gets 401 (algorithm allow-list)', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const forged = await new SignJWT({ client_id: 'x', scope: 'events:publish' })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(secret);
    const error = await rejection(`Bearer ${forged}`);
    expect(error.problem.status).toBe(401);
    expect(error.problem.detail).toMatch(/algorithm/);
  });

  it('EDU-4: a tampered payload fails the signature check', async () => {
    const [header, , signature] = (await token()).split('.');
    const payload = Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, client_id: 'dev-publisher', scope: 'admin', exp: now() + 300 })).toString('base64url');
    const error = await rejection(`Bearer ${header}.${payload}.${signature}`);
    expect(error.problem.detail).toMatch(/signature/);
  });

  it('EDU-4: a token signed by a key the issuer does not publish gets 401', async () => {
    expect((await rejection(`Bearer ${await token({}, { key: otherPrivateKey })}`)).problem.status).toBe(401);
  });

  it('EDU-4: a valid token without the needed scope gets 403 with error="insufficient_scope"', async () => {
    const error = await rejection(`Bearer ${await token({ scope: 'events:consume' })}`, scopes.publish);
    expect(error.problem.status).toBe(403);
    expect(error.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(error.headers['www-authenticate']).toContain('scope="events:publish"');
  });

  it('EDU-4: a token without exp is refused', async () => {
    const jwt = await new SignJWT({ client_id: 'x', scope: 'events:publish' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .sign(privateKey);
    expect((await rejection(`Bearer ${jwt}`)).problem.status).toBe(401);
  });
});
