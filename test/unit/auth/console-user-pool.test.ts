/**
 * Issue 16: with `koerier:consoleUserPool` the API takes the stack's Cognito user pool tokens
 * beside the partners' client-credentials tokens, from the console's app client only. The pool's
 * key set is served by a real HTTP server at `<issuer>/.well-known/jwks.json`, read the way a
 * function reads it (settings → readAuthSettings → tokenVerification), and the tokens are signed
 * by jose with the claims Cognito puts in its access tokens (no `aud`, no `typ`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenVerification } from '../../../functions/app/authentication.js';
import { readAuthSettings } from '../../../functions/config/auth-settings.js';
import { settingEnv } from '../../../functions/config/setting-names.js';
import { SettingsReader } from '../../../functions/config/settings-reader.js';
import {
  authenticate,
  hasScope,
  scopes,
  type Scope,
  type TokenVerification,
} from '../../../functions/core/auth/access-tokens.js';
import {
  CONSOLE_ADMIN_SCOPES,
  CONSOLE_USER_SCOPES,
  consoleUserPrincipal,
} from '../../../functions/core/auth/console-user-pool.js';
import { asyncRefusalOf } from '../../support/refusals.js';

const ORGANISATION = 'https://login.example.org/realms/koerier';
const CONSOLE_CLIENT = '5ksg7vu0consoleclient';
let server: Server;
let poolIssuer: string;
let poolKey: CryptoKey;
let organisationKey: CryptoKey;
let strayKey: CryptoKey;
let withPool: TokenVerification;
let withoutPool: TokenVerification;
let jwksRequests = 0;

beforeAll(async () => {
  const pool = await generateKeyPair('RS256');
  const organisation = await generateKeyPair('ES256');
  poolKey = pool.privateKey;
  organisationKey = organisation.privateKey;
  strayKey = (await generateKeyPair('RS256')).privateKey;
  const poolJwks = { keys: [{ ...(await exportJWK(pool.publicKey)), kid: 'pool-1', alg: 'RS256', use: 'sig' } as JWK] };
  const organisationJwks = {
    keys: [{ ...(await exportJWK(organisation.publicKey)), kid: 'org-1', alg: 'ES256', use: 'sig' } as JWK],
  };
  server = createServer((request, response) => {
    jwksRequests++;
    const body =
      request.url === '/eu-west-1_TestPool/.well-known/jwks.json'
        ? poolJwks
        : request.url === '/org/jwks'
          ? organisationJwks
          : undefined;
    response.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  poolIssuer = `${base}/eu-west-1_TestPool`;
  const env = {
    [settingEnv.issuer]: ORGANISATION,
    [settingEnv.audience]: 'koerier',
    [settingEnv.jwksUrl]: `${base}/org/jwks`,
  };
  withoutPool = tokenVerification(authSettings(env));
  withPool = tokenVerification(
    authSettings({
      ...env,
      [settingEnv.consoleUserPoolIssuer]: poolIssuer,
      [settingEnv.consoleUserPoolClientId]: CONSOLE_CLIENT,
    }),
  );
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function authSettings(env: Record<string, string>) {
  const settings = new SettingsReader(env);
  const auth = readAuthSettings(settings);
  settings.check();
  return auth;
}

/** An access token as Cognito issues it: RS256, `kid` only in the header, the app client in `client_id`. */
function poolToken(claims: Record<string, unknown> = {}, key: CryptoKey = poolKey) {
  return new SignJWT({
    client_id: CONSOLE_CLIENT,
    token_use: 'access',
    scope: 'openid email',
    username: 'j.jansen',
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'pool-1' })
    .setSubject('8f1c0b52-user')
    .setIssuer(poolIssuer)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key);
}

const bearer = async (token: Promise<string>) => `Bearer ${await token}`;

describe('console user pool tokens (issue 16)', () => {
  it('issue 16: a user in one partner group acts as that partner, with the console scopes and never publish', async () => {
    const authorization = await bearer(poolToken({ 'cognito:groups': ['partner:school-a'] }));
    const principal = await authenticate(authorization, scopes.readSubscriptions, withPool);
    expect(principal.clientId).toBe('school-a');
    expect([...principal.scopes].sort()).toEqual(['contracts:read', 'subscriptions:read']);
    const publish = await asyncRefusalOf(() => authenticate(authorization, scopes.publish, withPool));
    expect(publish.problem.status).toBe(403);
    expect(publish.headers['www-authenticate']).toContain('insufficient_scope');
    expect((await asyncRefusalOf(() => authenticate(authorization, scopes.admin, withPool))).problem.status).toBe(403);
  });

  it('issue 16, EDU-2: the admin group adds admin, which widens what an operator reads to every partner, and nothing to write with', async () => {
    const principal = await authenticate(
      await bearer(poolToken({ 'cognito:groups': ['admin', 'partner:operations'] })),
      scopes.readSubscriptions,
      withPool,
    );
    expect(principal.clientId).toBe('operations');
    expect(hasScope(principal, scopes.admin)).toBe(true);
    expect([...principal.scopes].sort()).toEqual(['admin', 'contracts:read', 'subscriptions:read']);
  });

  it('issue 16: a user in no partner group, or in two, is signed in but refused with 403', async () => {
    for (const groups of [undefined, [], ['admin'], ['partner:school-a', 'partner:school-b'], ['partner:']]) {
      const refusal = await asyncRefusalOf(async () =>
        authenticate(await bearer(poolToken({ 'cognito:groups': groups })), scopes.readSubscriptions, withPool),
      );
      expect(refusal.problem.status, JSON.stringify(groups)).toBe(403);
      expect(refusal.problem.detail).toMatch(/exactly one partner group/);
    }
  });

  it('EDU-2, issue 16: an ID token of the pool, or a token of another app client, is refused with 401', async () => {
    const idToken = await asyncRefusalOf(async () =>
      authenticate(
        await bearer(poolToken({ token_use: 'id', 'cognito:groups': ['partner:school-a'] })),
        scopes.readSubscriptions,
        withPool,
      ),
    );
    expect(idToken.problem.status).toBe(401);
    expect(idToken.problem.detail).toContain('token_use');
    const otherClient = await asyncRefusalOf(async () =>
      authenticate(
        await bearer(poolToken({ client_id: 'some-other-app', 'cognito:groups': ['partner:school-a'] })),
        scopes.readSubscriptions,
        withPool,
      ),
    );
    expect(otherClient.problem.status).toBe(401);
    expect(otherClient.problem.detail).toBe('The token was not issued to the console.');
  });

  it('EDU-2, issue 16: a token naming the pool but signed by another key, or by the organisation key, is refused with 401', async () => {
    for (const key of [strayKey]) {
      const refusal = await asyncRefusalOf(async () =>
        authenticate(
          await bearer(poolToken({ 'cognito:groups': ['partner:school-a'] }, key)),
          scopes.readSubscriptions,
          withPool,
        ),
      );
      expect(refusal.problem.status).toBe(401);
    }
    // The organisation's key signing a token that claims the pool's issuer: the pool's key set decides, not the organisation's.
    const forged = await new SignJWT({
      client_id: CONSOLE_CLIENT,
      token_use: 'access',
      'cognito:groups': ['partner:school-a', 'admin'],
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'org-1' })
      .setIssuer(poolIssuer)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(organisationKey);
    expect((await asyncRefusalOf(() => authenticate(`Bearer ${forged}`, scopes.admin, withPool))).problem.status).toBe(
      401,
    );
  });

  it('issue 16: a pool token that lives longer than the deployment allows is refused', async () => {
    const longLived = new SignJWT({
      client_id: CONSOLE_CLIENT,
      token_use: 'access',
      'cognito:groups': ['partner:school-a'],
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'pool-1' })
      .setIssuer(poolIssuer)
      .setIssuedAt()
      .setExpirationTime('30d')
      .sign(poolKey);
    const refusal = await asyncRefusalOf(async () =>
      authenticate(await bearer(longLived), scopes.readSubscriptions, withPool),
    );
    expect(refusal.problem.status).toBe(401);
    expect(refusal.problem.detail).toContain('lives too long');
  });

  it('issue 16: without a configured pool its tokens are refused, and the organisation tokens keep working beside a pool', async () => {
    const poolUser = await bearer(poolToken({ 'cognito:groups': ['partner:school-a'] }));
    const refusal = await asyncRefusalOf(() => authenticate(poolUser, scopes.readSubscriptions, withoutPool));
    expect(refusal.problem.status).toBe(401);
    // jose looks the key up in the organisation's set first: the pool's key is not there.
    expect(refusal.problem.detail).toBe('The token was signed with a key the issuer does not publish.');

    const partner = await new SignJWT({ client_id: 'dev-publisher', scope: 'events:publish' })
      .setProtectedHeader({ alg: 'ES256', kid: 'org-1', typ: 'at+jwt' })
      .setIssuer(ORGANISATION)
      .setAudience('koerier')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(organisationKey);
    expect((await authenticate(`Bearer ${partner}`, scopes.publish, withPool)).clientId).toBe('dev-publisher');
    expect(jwksRequests).toBeGreaterThanOrEqual(2);
  });

  it('issue 16: the two pool settings go together', () => {
    const settings = new SettingsReader({
      [settingEnv.issuer]: ORGANISATION,
      [settingEnv.audience]: 'koerier',
      [settingEnv.jwksUrl]: `${ORGANISATION}/jwks`,
      [settingEnv.consoleUserPoolIssuer]: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc',
    });
    readAuthSettings(settings);
    expect(() => settings.check()).toThrow(
      /KOERIER_CONSOLE_USER_POOL_ISSUER and KOERIER_CONSOLE_USER_POOL_CLIENT_ID go together/,
    );
  });

  it('issue 16: the groups claim maps to a principal in the domain, whatever else it holds', () => {
    expect(consoleUserPrincipal(['us-east-1_x_Google', 'partner:gemeente-x', 7])).toMatchObject({
      clientId: 'gemeente-x',
    });
    expect(consoleUserPrincipal('partner:school-a')).toMatch(/exactly one partner group/);
  });
});

describe('what a pool token may name and how it may be signed (issue 16)', () => {
  it('issue 16, EDU-4: a partner group whose client id holds a control character names no client Koerier can key by: 403', async () => {
    // The client id keys subscriptions, idempotency entries and logs; the group's text comes from the pool as it is.
    for (const group of ['partner:school\u0000a', 'partner:school\na', 'partner:school\ud800']) {
      const refusal = await asyncRefusalOf(async () =>
        authenticate(await bearer(poolToken({ 'cognito:groups': [group] })), scopes.readSubscriptions, withPool),
      );
      expect(refusal.problem.status, JSON.stringify(group)).toBe(403);
    }
  });

  it('issue 16, EDU-4: only RS256 is taken from the pool, even when its key set would lend the key to another algorithm', async () => {
    // A key published without "alg" can be imported for PS256 as well; the pool path pins RS256 itself
    // rather than trusting every pool's key set to say so.
    const pair = await generateKeyPair('PS256', { extractable: true });
    const issuer = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_NoAlg';
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'pool-ps' };
    delete jwk.alg;
    const verification: TokenVerification = {
      ...withoutPool,
      consoleUserPool: { issuer, clientId: CONSOLE_CLIENT, keys: createLocalJWKSet({ keys: [jwk] }) },
    };
    const signed = await new SignJWT({
      client_id: CONSOLE_CLIENT,
      token_use: 'access',
      'cognito:groups': ['partner:school-a'],
    })
      .setProtectedHeader({ alg: 'PS256', kid: 'pool-ps' })
      .setIssuer(issuer)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(pair.privateKey);
    const refusal = await asyncRefusalOf(() =>
      authenticate(`Bearer ${signed}`, scopes.readSubscriptions, verification),
    );
    expect(refusal.problem.status).toBe(401);
    expect(refusal.problem.detail).toMatch(/algorithm/);
  });
});

/**
 * EDU-2 ("only confidential clients"): the console is a public client (PKCE, no secret), so its
 * users' tokens read and never take part in the exchange: no consuming events, no making or
 * changing subscriptions, no publishing, no writing the register, no operator action.
 */
describe('EDU-2: a console user only reads (issue 36, item 6)', () => {
  const confidentialOnly: readonly Scope[] = [
    scopes.consume,
    scopes.manageSubscriptions,
    scopes.publish,
    scopes.writeContracts,
    scopes.admin,
  ];

  it('EDU-2: the console scopes are read scopes only, the admin group adding admin alone', () => {
    expect([...CONSOLE_USER_SCOPES].sort()).toEqual([scopes.readContracts, scopes.readSubscriptions]);
    expect(CONSOLE_ADMIN_SCOPES).toEqual([scopes.admin]);
    for (const groups of [['partner:school-a'], ['partner:school-a', 'admin']]) {
      const principal = consoleUserPrincipal(groups);
      if (typeof principal === 'string') throw new Error(principal);
      for (const scope of [scopes.consume, scopes.manageSubscriptions, scopes.publish, scopes.writeContracts]) {
        expect(principal.scopes.has(scope), `${groups.join(',')} ${scope}`).toBe(false);
      }
    }
  });

  it.each([
    ['a partner user', ['partner:school-a']],
    ['an operator', ['partner:operations', 'admin']],
  ])(
    'EDU-2: %s of the console is refused with 403 insufficient_scope for every operation needing a confidential client, and may read',
    async (_who, groups) => {
      const authorization = await bearer(poolToken({ 'cognito:groups': groups }));
      for (const scope of confidentialOnly) {
        const refusal = await asyncRefusalOf(() => authenticate(authorization, scope, withPool));
        expect(refusal.problem.status, scope).toBe(403);
        expect(refusal.headers['www-authenticate'], scope).toBe(
          `Bearer realm="koerier", error="insufficient_scope", scope="${scope}"`,
        );
        expect(refusal.problem.detail, scope).toContain('confidential client');
      }
      for (const scope of [scopes.readSubscriptions, scopes.readContracts]) {
        expect((await authenticate(authorization, scope, withPool)).clientId).toBe(groups[0]!.slice('partner:'.length));
      }
    },
  );

  it('EDU-2: a partner client holding subscriptions:manage reads with it (it includes subscriptions:read); one with events:consume alone does not', async () => {
    const clientToken = (scope: string) =>
      new SignJWT({ client_id: 'school-b', scope })
        .setProtectedHeader({ alg: 'ES256', kid: 'org-1', typ: 'at+jwt' })
        .setIssuer(ORGANISATION)
        .setAudience('koerier')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(organisationKey);
    expect(
      (await authenticate(await bearer(clientToken('subscriptions:manage')), scopes.readSubscriptions, withPool))
        .clientId,
    ).toBe('school-b');
    const consumer = await asyncRefusalOf(async () =>
      authenticate(await bearer(clientToken('events:consume')), scopes.readSubscriptions, withPool),
    );
    expect(consumer.problem.status).toBe(403);
    expect(consumer.problem.detail).toBe('This operation needs the scope "subscriptions:read".');
    // The inclusion goes one way: reading never lets a client manage.
    const reader = await asyncRefusalOf(async () =>
      authenticate(await bearer(clientToken('subscriptions:read')), scopes.manageSubscriptions, withPool),
    );
    expect(reader.problem.status).toBe(403);
  });
});
