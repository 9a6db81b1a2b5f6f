import {
  createLocalJWKSet,
  errors as joseErrors,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
} from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCESS_TOKEN_RULES, type AccessTokenRules } from '../../../functions/core/auth/access-token-rules.js';
import { authenticate, scopes, type TokenVerification } from '../../../functions/core/auth/access-tokens.js';
import {
  identityProviderPresets,
  presetClientIdClaim,
  type IdentityProviderName,
} from '../../../functions/core/auth/identity-providers.js';
import type { KoerierError } from '../../../functions/core/http/problems.js';
import { asyncRefusalOf } from '../../support/refusals.js';

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
  verification = {
    keys: createLocalJWKSet({ keys: [publicJwk] }),
    issuer: ISSUER,
    audience: AUDIENCE,
    rules: DEFAULT_ACCESS_TOKEN_RULES,
  };
});

interface TokenOptions {
  key?: CryptoKey;
  iss?: string;
  aud?: string;
  exp?: number | string;
  nbf?: number;
  /** `null`: no iat claim. */
  iat?: number | null;
  /** `null`: no typ header. */
  typ?: string | null;
}

function token(claims: Record<string, unknown> = {}, options: TokenOptions = {}) {
  const typ = options.typ === undefined ? 'at+jwt' : options.typ;
  const jwt = new SignJWT({ client_id: 'dev-publisher', scope: 'events:publish subscriptions:manage', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', ...(typ === null ? {} : { typ }) })
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setExpirationTime(options.exp ?? '5m');
  if (options.iat !== null) jwt.setIssuedAt(options.iat);
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign(options.key ?? privateKey);
}

function withRules(rules: Partial<AccessTokenRules>): TokenVerification {
  return { ...verification, rules: { ...DEFAULT_ACCESS_TOKEN_RULES, ...rules } };
}

function rejection(
  authorization: string | undefined,
  scope = scopes.publish,
  by: TokenVerification = verification,
): Promise<KoerierError> {
  return asyncRefusalOf(() => authenticate(authorization, scope, by));
}

const now = () => Math.floor(Date.now() / 1000);

describe('access tokens (EDU-2, EDU-4)', () => {
  it('EDU-2: a valid client-credentials token yields the client and its scopes', async () => {
    const principal = await authenticate(`Bearer ${await token()}`, scopes.publish, verification);
    expect(principal.clientId).toBe('dev-publisher');
    expect([...principal.scopes]).toEqual(['events:publish', 'subscriptions:manage']);
  });

  it('EDU-2, review #17: `scp` arrays are read as scopes', async () => {
    const principal = await authenticate(
      `Bearer ${await token({ scope: undefined, scp: ['events:publish'] })}`,
      scopes.publish,
      verification,
    );
    expect([...principal.scopes]).toEqual(['events:publish']);
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
    const error = await rejection(`Bearer ${await token({}, { iat: now() - 600, exp: now() - 120 })}`);
    expect(error.problem.status).toBe(401);
    expect(error.problem.detail).toMatch(/expired/);
  });

  it('EDU-4: up to 60 s of clock skew on exp is tolerated, more is not', async () => {
    await expect(
      authenticate(`Bearer ${await token({}, { iat: now() - 600, exp: now() - 30 })}`, scopes.publish, verification),
    ).resolves.toBeTruthy();
    expect((await rejection(`Bearer ${await token({}, { iat: now() - 600, exp: now() - 90 })}`)).problem.status).toBe(
      401,
    );
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
    const body = Buffer.from(
      JSON.stringify({ iss: ISSUER, aud: AUDIENCE, client_id: 'x', scope: 'events:publish', exp: now() + 300 }),
    ).toString('base64url');
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
    const payload = Buffer.from(
      JSON.stringify({ iss: ISSUER, aud: AUDIENCE, client_id: 'dev-publisher', scope: 'admin', exp: now() + 300 }),
    ).toString('base64url');
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
    // Everything else in order, so the missing exp is what is refused.
    const jwt = await new SignJWT({ client_id: 'x', scope: 'events:publish' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .sign(privateKey);
    const error = await rejection(`Bearer ${jwt}`);
    expect(error.problem.status).toBe(401);
    expect(error.problem.detail).toMatch(/"exp"/);
  });
});

/** The refusal is a 401 invalid_token whose description says `pattern`, in the problem and the header. */
function expectInvalidToken(error: KoerierError, pattern: RegExp): void {
  expect(error.problem.status).toBe(401);
  expect(error.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
  expect(error.problem.detail).toMatch(pattern);
  // In the header the description's double quotes become single ones (a quoted-string may not hold them).
  expect(error.headers['www-authenticate']).toMatch(
    new RegExp(`error_description=".*${pattern.source.replace(/"/g, "'")}`),
  );
}

describe('which access tokens a deployment accepts (EDU-2, EDU-4, review #17)', () => {
  it('EDU-4, review #17: a token without a typ header gets 401 invalid_token', async () => {
    expectInvalidToken(await rejection(`Bearer ${await token({}, { typ: null })}`), /not an access token/);
  });

  it('EDU-4, review #17: typ "JWT" (an ID token, say) gets 401 invalid_token under the default at+jwt', async () => {
    expectInvalidToken(await rejection(`Bearer ${await token({}, { typ: 'JWT' })}`), /not an access token/);
  });

  it('EDU-2, review #17: typ at+jwt is compared case-insensitively, with or without application/', async () => {
    for (const typ of ['at+jwt', 'AT+JWT', 'application/at+jwt', 'Application/AT+JWT']) {
      await expect(
        authenticate(`Bearer ${await token({}, { typ })}`, scopes.publish, verification),
        typ,
      ).resolves.toMatchObject({ clientId: 'dev-publisher' });
    }
    expectInvalidToken(await rejection(`Bearer ${await token({}, { typ: 'text/at+jwt' })}`), /not an access token/);
    expectInvalidToken(await rejection(`Bearer ${await token({}, { typ: 'at+jwt+x' })}`), /not an access token/);
  });

  it('EDU-2, review #17: with the switch set to JWT, typ JWT (and still at+jwt) is accepted; no typ or another type is not', async () => {
    const jwtSwitch = withRules({ tokenType: 'JWT' });
    for (const typ of ['JWT', 'jwt', 'application/jwt', 'at+jwt']) {
      await expect(
        authenticate(`Bearer ${await token({}, { typ })}`, scopes.publish, jwtSwitch),
        typ,
      ).resolves.toMatchObject({ clientId: 'dev-publisher' });
    }
    expectInvalidToken(
      await rejection(`Bearer ${await token({}, { typ: null })}`, scopes.publish, jwtSwitch),
      /not an access token/,
    );
    expectInvalidToken(
      await rejection(`Bearer ${await token({}, { typ: 'dpop+jwt' })}`, scopes.publish, jwtSwitch),
      /not an access token/,
    );
  });

  it('EDU-4, review #17: a token without iat gets 401 invalid_token naming the claim', async () => {
    expectInvalidToken(await rejection(`Bearer ${await token({}, { iat: null })}`), /"iat"/);
  });

  it('EDU-4, review #17: a lifetime (exp - iat) over the cap gets 401 invalid_token; at the cap it passes', async () => {
    const issued = now() - 10;
    const cap = DEFAULT_ACCESS_TOKEN_RULES.maxLifetimeSeconds;
    expect(cap).toBe(7200);
    await expect(
      authenticate(`Bearer ${await token({}, { iat: issued, exp: issued + cap })}`, scopes.publish, verification),
    ).resolves.toBeTruthy();
    expectInvalidToken(
      await rejection(`Bearer ${await token({}, { iat: issued, exp: issued + cap + 1 })}`),
      /lives too long.*7200/,
    );
    // A year-long token is refused even though it is fresh and unexpired.
    expectInvalidToken(
      await rejection(`Bearer ${await token({}, { iat: issued, exp: issued + 365 * 24 * 3600 })}`),
      /lives too long/,
    );
  });

  it('EDU-4, review #17: the cap is the deployment’s setting', async () => {
    const issued = now() - 10;
    const tenMinutes = withRules({ maxLifetimeSeconds: 600 });
    expectInvalidToken(
      await rejection(`Bearer ${await token({}, { iat: issued, exp: issued + 601 })}`, scopes.publish, tenMinutes),
      /at most 600 seconds/,
    );
    await expect(
      authenticate(`Bearer ${await token({}, { iat: issued, exp: issued + 600 })}`, scopes.publish, tenMinutes),
    ).resolves.toBeTruthy();
  });

  it('EDU-4, review #17: iat in the future beyond the 60 s skew gets 401 invalid_token; within the skew it passes', async () => {
    expectInvalidToken(
      await rejection(`Bearer ${await token({}, { iat: now() + 120, exp: now() + 600 })}`),
      /issued in the future/,
    );
    await expect(
      authenticate(`Bearer ${await token({}, { iat: now() + 30, exp: now() + 600 })}`, scopes.publish, verification),
    ).resolves.toBeTruthy();
  });

  it('EDU-4, review #17: exp not after iat gets 401 invalid_token', async () => {
    const issued = now() + 30;
    expectInvalidToken(
      await rejection(`Bearer ${await token({}, { iat: issued, exp: issued })}`),
      /expires before it is issued/,
    );
  });

  it('EDU-4, review #17: without the client claim the token gets 401 invalid_token, even when sub names someone', async () => {
    const error = await rejection(
      `Bearer ${await token({ client_id: undefined, sub: 'dev-publisher', azp: 'dev-publisher' })}`,
    );
    expectInvalidToken(error, /names no client.*"client_id"/);
    expectInvalidToken(await rejection(`Bearer ${await token({ client_id: '' })}`), /names no client/);
    expectInvalidToken(await rejection(`Bearer ${await token({ client_id: ['dev-publisher'] })}`), /names no client/);
  });

  it('EDU-4, review #1: a client claim with an unpaired surrogate or a control character names no client (it could key nothing): 401', async () => {
    for (const clientId of ['dev\ud800publisher', 'dev\udc00', 'dev\u0000publisher', 'dev\npublisher']) {
      expectInvalidToken(await rejection(`Bearer ${await token({ client_id: clientId })}`), /names no client/);
    }
    const principal = await authenticate(
      `Bearer ${await token({ client_id: 'école-😀' })}`,
      scopes.publish,
      verification,
    );
    expect(principal.clientId).toBe('école-😀');
  });

  it('EDU-2, review #17: with the client claim configured as azp the client comes from azp, never from client_id or sub', async () => {
    const azp = withRules({ clientIdClaim: 'azp' });
    const principal = await authenticate(
      `Bearer ${await token({ client_id: 'someone-else', azp: 'entra-app', sub: 'object-id' })}`,
      scopes.publish,
      azp,
    );
    expect(principal.clientId).toBe('entra-app');
    expectInvalidToken(
      await rejection(`Bearer ${await token({ sub: 'dev-publisher' })}`, scopes.publish, azp),
      /names no client.*"azp"/,
    );
  });

  it('review #17: a refusal never echoes the token’s own claim values', async () => {
    const error = await rejection(
      `Bearer ${await token({ client_id: undefined, sub: 'secret-subject-42' }, { typ: 'JWT' })}`,
    );
    expect(JSON.stringify(error.problem) + JSON.stringify(error.headers)).not.toContain('secret-subject-42');
  });
});

describe('issue 12 item 2: tokens as Keycloak, Entra ID and an Edukoppeling issuer hand them out, under their presets', () => {
  const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  let rsaKey: CryptoKey;
  let rsaKeys: TokenVerification['keys'];

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    rsaKey = pair.privateKey;
    rsaKeys = createLocalJWKSet({
      keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'rsa1', alg: 'RS256', use: 'sig' }],
    });
  });

  function presetVerification(provider: IdentityProviderName, issuer: string): TokenVerification {
    const preset = identityProviderPresets[provider];
    return {
      keys: rsaKeys,
      issuer,
      audience: AUDIENCE,
      rules: {
        ...DEFAULT_ACCESS_TOKEN_RULES,
        tokenType: preset.tokenType,
        clientIdClaim: presetClientIdClaim(provider, issuer),
        scopeClaims: preset.scopeClaims,
      },
    };
  }

  function providerToken(issuer: string, typ: string, claims: Record<string, unknown>): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa1', typ })
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(rsaKey);
  }

  it('EDU-2: Keycloak (typ JWT, the client in azp, scopes in scope): the preset reads the client from azp, not from the service account sub', async () => {
    const issuer = 'https://login.example.org/realms/partners';
    const verification = presetVerification('keycloak', issuer);
    const keycloak = await providerToken(issuer, 'JWT', {
      typ: 'Bearer',
      azp: 'partner-lvs',
      sub: '5b1c3a0e-service-account-user',
      scope: 'profile events:publish email',
      clientHost: '192.0.2.10',
    });
    const principal = await authenticate(`Bearer ${keycloak}`, scopes.publish, verification);
    expect(principal).toEqual({ clientId: 'partner-lvs', scopes: new Set(['profile', 'events:publish', 'email']) });
    // The same token under the default rules is refused for its typ: the preset is what makes it acceptable.
    expectInvalidToken(
      await asyncRefusalOf(() =>
        authenticate(`Bearer ${keycloak}`, scopes.publish, { ...verification, rules: DEFAULT_ACCESS_TOKEN_RULES }),
      ),
      /not an access token/,
    );
  });

  it('EDU-2: Entra ID v2.0 application token (typ JWT, azp, roles array): the preset reads the client from azp and the scopes from roles', async () => {
    const issuer = `https://login.microsoftonline.com/${TENANT}/v2.0`;
    const verification = presetVerification('entra-id', issuer);
    const entra = await providerToken(issuer, 'JWT', {
      azp: '0f5c3c1e-partner-app',
      azpacr: '1',
      oid: 'service-principal-object-id',
      sub: 'service-principal-object-id',
      tid: TENANT,
      roles: ['events:publish', 'subscriptions:manage'],
      ver: '2.0',
    });
    const principal = await authenticate(`Bearer ${entra}`, scopes.manageSubscriptions, verification);
    expect(principal).toEqual({
      clientId: '0f5c3c1e-partner-app',
      scopes: new Set(['events:publish', 'subscriptions:manage']),
    });
    // Under the default rules Entra's roles are no scopes at all: 403, which is what issue 12 found.
    const defaults = {
      ...verification,
      rules: { ...verification.rules, scopeClaims: DEFAULT_ACCESS_TOKEN_RULES.scopeClaims },
    };
    expect((await asyncRefusalOf(() => authenticate(`Bearer ${entra}`, scopes.publish, defaults))).problem.status).toBe(
      403,
    );
  });

  it('EDU-2: Entra ID v1.0 application token names the client in appid; the preset follows the issuer form', async () => {
    const issuer = `https://sts.windows.net/${TENANT}/`;
    const entraV1 = await providerToken(issuer, 'JWT', { appid: 'legacy-app', roles: ['events:publish'], ver: '1.0' });
    const principal = await authenticate(`Bearer ${entraV1}`, scopes.publish, presetVerification('entra-id', issuer));
    expect(principal.clientId).toBe('legacy-app');
  });

  it('EDU-4: under the Entra ID preset a delegated (user) token, whose permissions are in scp, grants nothing: 403', async () => {
    const issuer = `https://login.microsoftonline.com/${TENANT}/v2.0`;
    const userToken = await providerToken(issuer, 'JWT', {
      azp: 'spa-app',
      scp: 'events:publish',
      name: 'A. User',
      ver: '2.0',
    });
    const refusal = await asyncRefusalOf(() =>
      authenticate(`Bearer ${userToken}`, scopes.publish, presetVerification('entra-id', issuer)),
    );
    expect(refusal.problem.status).toBe(403);
    expect(refusal.headers['www-authenticate']).toMatch(/error="insufficient_scope"/);
  });

  it('EDU-2, EDU-4: the Edukoppeling preset takes RFC 9068 tokens (at+jwt, client_id, scope) and refuses typ JWT', async () => {
    const issuer = 'https://idp.edu.example.org';
    const verification = presetVerification('edukoppeling', issuer);
    const rfc9068 = await providerToken(issuer, 'at+jwt', {
      client_id: 'school-lvs',
      sub: 'school-lvs',
      scope: 'events:publish',
      jti: 'j1',
    });
    expect((await authenticate(`Bearer ${rfc9068}`, scopes.publish, verification)).clientId).toBe('school-lvs');
    const labelledJwt = await providerToken(issuer, 'JWT', { client_id: 'school-lvs', scope: 'events:publish' });
    expectInvalidToken(
      await asyncRefusalOf(() => authenticate(`Bearer ${labelledJwt}`, scopes.publish, verification)),
      /not an access token/,
    );
  });

  it('EDU-2: scope claims are tried in the configured order and only those: roles is never read unless named', async () => {
    const issuer = ISSUER;
    const both = await providerToken(issuer, 'at+jwt', {
      client_id: 'c',
      scope: 'contracts:read',
      roles: ['events:publish'],
    });
    const base = { keys: rsaKeys, issuer, audience: AUDIENCE };
    const withScopes = (scopeClaims: AccessTokenRules['scopeClaims']) => ({
      ...base,
      rules: { ...DEFAULT_ACCESS_TOKEN_RULES, scopeClaims },
    });
    expect([
      ...(await authenticate(`Bearer ${both}`, scopes.readContracts, withScopes(['scope', 'roles']))).scopes,
    ]).toEqual(['contracts:read']);
    expect([...(await authenticate(`Bearer ${both}`, scopes.publish, withScopes(['roles', 'scope']))).scopes]).toEqual([
      'events:publish',
    ]);
    expect(
      (await asyncRefusalOf(() => authenticate(`Bearer ${both}`, scopes.publish, withScopes(['scope', 'scp'])))).problem
        .status,
    ).toBe(403);
  });
});

describe('the Authorization header (EDU-4, RFC 6750 §2.1)', () => {
  it('EDU-4: "Bearer" followed by one or more spaces and the token is read; trailing whitespace is tolerated', async () => {
    const jwt = await token();
    for (const authorization of [
      `Bearer ${jwt}`,
      `Bearer   ${jwt}`,
      `bearer ${jwt}`,
      `Bearer ${jwt} `,
      `Bearer ${jwt}\t`,
    ]) {
      await expect(
        authenticate(authorization, scopes.publish, verification),
        JSON.stringify(authorization),
      ).resolves.toMatchObject({
        clientId: 'dev-publisher',
      });
    }
  });

  it('EDU-4: a valid token under another scheme name, or with anything after it, is no bearer token: 401', async () => {
    const jwt = await token();
    // Only the whole header decides: a scheme that merely ends in "Bearer", or a token with a tail,
    // is not what RFC 6750 defines, however valid the token inside it.
    for (const authorization of [
      `XBearer ${jwt}`,
      `Basic Bearer ${jwt}`,
      `Bearer ${jwt} extra`,
      `Bearer ${jwt}!`,
      `Bearer ${jwt}, Basic ZGV2`,
    ]) {
      const error = await rejection(authorization);
      expect(error.problem.status, authorization.slice(0, 12)).toBe(401);
      expect(error.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    }
  });
});

describe('what a token grants (EDU-2)', () => {
  it('EDU-2: scopes separated by several spaces are the scope names, no empty one among them', async () => {
    const principal = await authenticate(
      `Bearer ${await token({ scope: ' events:publish   contracts:read ' })}`,
      scopes.publish,
      verification,
    );
    expect([...principal.scopes]).toEqual(['events:publish', 'contracts:read']);
  });

  it('EDU-2: in a scope array only the strings are scopes; other entries grant nothing', async () => {
    const principal = await authenticate(
      `Bearer ${await token({ scope: undefined, scp: ['events:publish', 7, null, { admin: true }] })}`,
      scopes.publish,
      verification,
    );
    expect([...principal.scopes]).toEqual(['events:publish']);
  });
});

describe('the issuer’s key set being unreachable is Koerier’s outage (EDU-4)', () => {
  const unreachable = (error: Error): TokenVerification => ({
    ...verification,
    keys: () => {
      throw error;
    },
  });

  it('EDU-4: a key set that times out, answers garbage or cannot be fetched gives 503 with Retry-After, not a 401 blaming the token', async () => {
    for (const error of [
      new joseErrors.JWKSTimeout(),
      new joseErrors.JWKSInvalid('not a key set'),
      new TypeError('fetch failed'),
    ]) {
      const refusal = await rejection(`Bearer ${await token()}`, scopes.publish, unreachable(error));
      expect(refusal.problem.status, error.name).toBe(503);
      expect(refusal.headers['retry-after'], error.name).toBe('5');
      expect(refusal.headers['www-authenticate'], error.name).toBeUndefined();
    }
  });

  it('EDU-4: a key set that has no key for the token is the token’s problem: 401', async () => {
    const refusal = await rejection(
      `Bearer ${await token()}`,
      scopes.publish,
      unreachable(new joseErrors.JWKSNoMatchingKey()),
    );
    expect(refusal.problem.status).toBe(401);
    expect(refusal.headers['retry-after']).toBeUndefined();
  });
});

describe('clock skew on iat (EDU-4)', () => {
  it('EDU-4: iat exactly 60 s ahead of Koerier’s clock is within the skew and passes; 61 s is not', async () => {
    const at = Date.UTC(2026, 10, 27, 12, 0, 0);
    const seconds = at / 1000;
    const clocked = (): TokenVerification => ({ ...verification, currentDate: new Date(at) });
    const edge = await token({}, { iat: seconds + 60, exp: seconds + 600 });
    await expect(authenticate(`Bearer ${edge}`, scopes.publish, clocked())).resolves.toMatchObject({
      clientId: 'dev-publisher',
    });
    const beyond = await token({}, { iat: seconds + 61, exp: seconds + 600 });
    expectInvalidToken(await rejection(`Bearer ${beyond}`, scopes.publish, clocked()), /issued in the future/);
  });
});
