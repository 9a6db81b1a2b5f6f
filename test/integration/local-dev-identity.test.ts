import { stat, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCESS_TOKEN_RULES } from '../../functions/core/auth/access-token-rules.js';
import { authenticate } from '../../functions/core/auth/access-tokens.js';
import { createApiGateway, type ApiGateway } from '../../local/api-gateway.js';
import { createDevIdentity, type DevIdentity } from '../../local/dev-identity.js';
import { ALL_SCOPES, loadOrCreateLocalConfig } from '../../local/local-config-file.js';

const CLIENTS = {
  publisher: { secret: 'publisher-secret-123', scopes: ['events:publish', 'contracts:read'] },
  // Characters that RFC 6749 §2.3.1 form-encodes inside HTTP Basic credentials.
  'odd:client': { secret: 'p+s:w%rd é', scopes: ['events:consume'] },
};

describe('development OAuth2 server: client credentials, RFC 9068 JWTs, JWKS', () => {
  let stateDir: string;
  let gateway: ApiGateway;
  let identity: DevIdentity;
  let url: string;

  const token = (form: Record<string, string> | string, headers: Record<string, string> = {}) =>
    fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
    });
  const basic = (id: string, secret: string) => {
    const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
    return { authorization: `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}` };
  };

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'koerier-identity-'));
    gateway = createApiGateway(() => undefined);
    await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
    identity = await createDevIdentity({ stateDir, issuer: url, audience: 'koerier', clients: CLIENTS });
    gateway.mount(
      [],
      [
        { method: 'POST', path: '/oauth/token', handle: (request) => identity.tokenEndpoint(request) },
        {
          method: 'GET',
          path: '/.well-known/jwks.json',
          handle: async () => ({
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(identity.jwks),
          }),
        },
      ],
    );
  });
  afterAll(async () => {
    await new Promise((resolve) => gateway.server.close(resolve));
    await rm(stateDir, { recursive: true, force: true });
  });

  it('EDU-2: client_secret_post gets a Bearer token that verifies against the JWKS with every RFC 9068 claim', async () => {
    const response = await token({
      grant_type: 'client_credentials',
      client_id: 'publisher',
      client_secret: CLIENTS.publisher.secret,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'events:publish contracts:read' });

    const accessToken = body['access_token'] as string;
    const { payload, protectedHeader } = await jwtVerify(
      accessToken,
      createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)),
      {
        issuer: url,
        audience: 'koerier',
        typ: 'at+jwt',
        algorithms: ['ES256'],
      },
    );
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(protectedHeader.kid).toBe(identity.jwks.keys[0]?.kid);
    expect(payload).toMatchObject({ sub: 'publisher', client_id: 'publisher', scope: 'events:publish contracts:read' });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);
    expect(payload.nbf).toBe(payload.iat);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('publishes only the public key, with kid, alg and use', async () => {
    const jwks = (await (await fetch(`${url}/.well-known/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(typeof jwks.keys[0]?.['kid']).toBe('string');
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('EDU-4: Koerier’s own token verifier accepts a development token and reads client and scopes from it', async () => {
    const response = await token({
      grant_type: 'client_credentials',
      client_id: 'publisher',
      client_secret: CLIENTS.publisher.secret,
    });
    const { access_token: accessToken } = (await response.json()) as { access_token: string };
    // The default rules of a deployment (review #17): typ at+jwt, iat and exp within 2 hours, client_id.
    const principal = await authenticate(`Bearer ${accessToken}`, 'events:publish', {
      keys: createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)),
      issuer: url,
      audience: 'koerier',
      rules: DEFAULT_ACCESS_TOKEN_RULES,
    });
    expect(principal.clientId).toBe('publisher');
    expect([...principal.scopes]).toEqual(['events:publish', 'contracts:read']);
  });

  it('EDU-2: client_secret_basic works, with the form-encoding of RFC 6749 §2.3.1', async () => {
    const response = await token(
      { grant_type: 'client_credentials' },
      basic('odd:client', CLIENTS['odd:client'].secret),
    );
    expect(response.status).toBe(200);
    const { access_token: accessToken } = (await response.json()) as { access_token: string };
    expect(decodeProtectedHeader(accessToken).typ).toBe('at+jwt');
    const { payload } = await jwtVerify(accessToken, createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)));
    expect(payload['client_id']).toBe('odd:client');
  });

  it('grants a requested subset of the client’s scopes, and only that', async () => {
    const response = await token({
      grant_type: 'client_credentials',
      client_id: 'publisher',
      client_secret: CLIENTS.publisher.secret,
      scope: 'contracts:read',
    });
    const body = (await response.json()) as { access_token: string; scope: string };
    expect(body.scope).toBe('contracts:read');
    const { payload } = await jwtVerify(body.access_token, createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)));
    expect(payload['scope']).toBe('contracts:read');
  });

  const errorCases: [string, () => Promise<Response>, number, string][] = [
    [
      'a JSON body',
      () =>
        fetch(`${url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"grant_type":"client_credentials"}',
        }),
      400,
      'invalid_request',
    ],
    [
      'no grant_type',
      () => token({ client_id: 'publisher', client_secret: CLIENTS.publisher.secret }),
      400,
      'invalid_request',
    ],
    [
      'a repeated parameter',
      () => token('grant_type=client_credentials&client_id=publisher&client_secret=x&client_secret=y'),
      400,
      'invalid_request',
    ],
    [
      'Basic and a form secret together',
      () =>
        token({ grant_type: 'client_credentials', client_secret: 'x' }, basic('publisher', CLIENTS.publisher.secret)),
      400,
      'invalid_request',
    ],
    [
      'the password grant',
      () =>
        token({
          grant_type: 'password',
          username: 'u',
          password: 'p',
          client_id: 'publisher',
          client_secret: CLIENTS.publisher.secret,
        }),
      400,
      'unsupported_grant_type',
    ],
    [
      'a scope the client lacks',
      () =>
        token({
          grant_type: 'client_credentials',
          client_id: 'publisher',
          client_secret: CLIENTS.publisher.secret,
          scope: 'events:publish admin',
        }),
      400,
      'invalid_scope',
    ],
    [
      'a client id without a secret (public client)',
      () => token({ grant_type: 'client_credentials', client_id: 'publisher' }),
      401,
      'invalid_client',
    ],
    ['no client authentication at all', () => token({ grant_type: 'client_credentials' }), 401, 'invalid_client'],
    [
      'a wrong secret in the form',
      () => token({ grant_type: 'client_credentials', client_id: 'publisher', client_secret: 'wrong-secret' }),
      401,
      'invalid_client',
    ],
    [
      'an unknown client',
      () => token({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: CLIENTS.publisher.secret }),
      401,
      'invalid_client',
    ],
    [
      'a wrong secret over HTTP Basic',
      () => token({ grant_type: 'client_credentials' }, basic('publisher', 'wrong-secret')),
      401,
      'invalid_client',
    ],
    [
      'a Bearer header instead of client credentials',
      () => token({ grant_type: 'client_credentials' }, { authorization: 'Bearer abc' }),
      401,
      'invalid_client',
    ],
  ];
  it.each(errorCases)('EDU-2: %s is refused with the RFC 6749 §5.2 error', async (_case, request, status, error) => {
    const response = await request();
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body['error']).toBe(error);
    expect(typeof body['error_description']).toBe('string');
    expect(body).not.toHaveProperty('access_token');
    if (status === 401) expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
  });

  it('EDU-2, review #17: with the laptop set like an Entra ID deployment (typ JWT, client in azp, scopes in roles, a 20-minute cap) its tokens pass those rules', async () => {
    const rules = { tokenType: 'JWT', clientIdClaim: 'azp', maxLifetimeSeconds: 1200, scopeClaims: ['roles'] } as const;
    const entraLike = await createDevIdentity({
      stateDir,
      issuer: url,
      audience: 'koerier',
      clients: CLIENTS,
      tokenRules: rules,
    });
    const response = await entraLike.tokenEndpoint({
      method: 'POST',
      path: '/oauth/token',
      query: {},
      routeKey: 'POST /oauth/token',
      pathParameters: {},
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.from(
        new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: 'publisher',
          client_secret: CLIENTS.publisher.secret,
        }).toString(),
      ),
    });
    const body = JSON.parse(String(response.body)) as { access_token: string; expires_in: number };
    expect(body.expires_in).toBe(1200);
    expect(decodeProtectedHeader(body.access_token).typ).toBe('JWT');
    expect(decodeJwt(body.access_token)).toMatchObject({ roles: expect.arrayContaining(['events:publish']) });
    expect(decodeJwt(body.access_token)).not.toHaveProperty('scope');
    const keys = createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`));
    const principal = await authenticate(`Bearer ${body.access_token}`, 'events:publish', {
      keys,
      issuer: url,
      audience: 'koerier',
      rules,
    });
    expect(principal.clientId).toBe('publisher');
    // And a deployment on the defaults refuses it: the typ is what differs.
    await expect(
      authenticate(`Bearer ${body.access_token}`, 'events:publish', {
        keys,
        issuer: url,
        audience: 'koerier',
        rules: DEFAULT_ACCESS_TOKEN_RULES,
      }),
    ).rejects.toMatchObject({
      problem: { status: 401, detail: expect.stringMatching(/not an access token/) },
    });
  });

  it('keeps its signing key in the state directory: a restarted server publishes the same key', async () => {
    const again = await createDevIdentity({ stateDir, issuer: url, audience: 'koerier', clients: CLIENTS });
    expect(again.jwks).toEqual(identity.jwks);
    expect((await stat(join(stateDir, 'dev-signing-key.json'))).mode & 0o777).toBe(0o600);
  });
});

describe('koerier.local.json', () => {
  it('EDU-2: is created on first start with two confidential development clients holding every scope, and read back unchanged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-config-'));
    try {
      const path = join(dir, 'koerier.local.json');
      const first = await loadOrCreateLocalConfig(path);
      expect(first.created).toBe(true);
      expect(Object.keys(first.config.clients).sort()).toEqual(['dev-publisher', 'dev-subscriber']);
      for (const client of Object.values(first.config.clients)) {
        expect([...client.scopes].sort()).toEqual([...ALL_SCOPES].sort());
        expect(client.secret.length).toBeGreaterThanOrEqual(32);
      }
      expect(ALL_SCOPES).toEqual([
        'events:publish',
        'events:consume',
        'subscriptions:manage',
        'subscriptions:read',
        'contracts:read',
        'contracts:write',
        'admin',
      ]);
      expect(first.config.clients['dev-publisher']?.secret).not.toBe(first.config.clients['dev-subscriber']?.secret);
      expect(first.config.entitlements).toEqual({ 'dev-subscriber': [{ typePrefix: '' }] });
      expect(first.config.validationAgreedClients).toEqual([]);
      expect((await stat(path)).mode & 0o777).toBe(0o600);

      const second = await loadOrCreateLocalConfig(path);
      expect(second).toEqual({ config: first.config, created: false });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('EDU-3, WH-5: "validationHandshake" is optional (the functions\' default), one of the two policies, and anything else stops the start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-config-'));
    try {
      const path = join(dir, 'koerier.local.json');
      const clients = { a: { secret: 'long-enough-secret', scopes: ['events:publish'] } };
      await writeFile(path, JSON.stringify({ clients }));
      expect((await loadOrCreateLocalConfig(path)).config.validationHandshake).toBeUndefined();
      await writeFile(path, JSON.stringify({ clients, validationHandshake: 'agreed-for-directory-partners' }));
      expect((await loadOrCreateLocalConfig(path)).config.validationHandshake).toBe('agreed-for-directory-partners');
      await writeFile(path, JSON.stringify({ clients, validationHandshake: 'off' }));
      await expect(loadOrCreateLocalConfig(path)).rejects.toThrow(
        `${path} is not a valid Koerier local configuration: "validationHandshake" must be "required" or "agreed-for-directory-partners", got "off"`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('EDU-7: entitlements are checked by the rules KOERIER_ENTITLEMENTS is read with: a grant with an empty "source" is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-config-'));
    try {
      const path = join(dir, 'koerier.local.json');
      const clients = { a: { secret: 'long-enough-secret', scopes: ['events:publish'] } };
      await writeFile(path, JSON.stringify({ clients, entitlements: { a: [{ typePrefix: 'nl.edu.', source: '' }] } }));
      await expect(loadOrCreateLocalConfig(path)).rejects.toThrow(
        `${path} is not a valid Koerier local configuration: "source" in a grant of "a" must be a non-empty string`,
      );
      await writeFile(
        path,
        JSON.stringify({ clients, entitlements: { a: [{ typePrefix: 'nl.edu.', source: 'urn:x' }] } }),
      );
      expect((await loadOrCreateLocalConfig(path)).config.entitlements).toEqual({
        a: [{ typePrefix: 'nl.edu.', source: 'urn:x' }],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('EDU-IN, review #15: publishers — a new file lets dev-publisher publish under every source and nobody else; a one-client file without the section lets that client; a malformed one is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-config-'));
    try {
      const fresh = await loadOrCreateLocalConfig(join(dir, 'fresh.json'));
      expect(fresh.config.publishers).toEqual({ 'dev-publisher': [''], 'dev-subscriber': [] });
      expect(JSON.parse(await readFile(join(dir, 'fresh.json'), 'utf8')).publishers).toEqual({
        'dev-publisher': [''],
        'dev-subscriber': [],
      });

      const path = join(dir, 'koerier.local.json');
      const a = { secret: 'long-enough-secret', scopes: ['events:publish'] };
      await writeFile(path, JSON.stringify({ clients: { a } }));
      expect((await loadOrCreateLocalConfig(path)).config.publishers).toEqual({ a: [''] });
      const clients = { a, b: { secret: 'long-enough-secret', scopes: [] } };
      await writeFile(path, JSON.stringify({ clients, publishers: { a: ['urn:nld:oin:1:'] } }));
      expect((await loadOrCreateLocalConfig(path)).config.publishers).toEqual({ a: ['urn:nld:oin:1:'] });
      await writeFile(path, JSON.stringify({ clients, publishers: { a: 'urn:nld:oin:1:' } }));
      await expect(loadOrCreateLocalConfig(path)).rejects.toThrow(
        `${path} is not a valid Koerier local configuration: publish grants of "a" must be a list of source prefixes`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('review #15: overlapping grants of two clients are refused when the file is read, naming both; so is a two-client file without the section', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-config-'));
    try {
      const path = join(dir, 'koerier.local.json');
      const client = { secret: 'long-enough-secret', scopes: ['events:publish'] };
      const clients = { 'dev-publisher': client, 'dev-subscriber': client };
      // What earlier versions wrote by default: both development clients everywhere.
      await writeFile(path, JSON.stringify({ clients, publishers: { 'dev-publisher': [''], 'dev-subscriber': [''] } }));
      await expect(loadOrCreateLocalConfig(path)).rejects.toThrow(
        `${path} is not a valid Koerier local configuration: publish grants of different clients overlap, so each could publish the other's events: "dev-publisher" (grant "") and "dev-subscriber" (grant "")`,
      );
      await writeFile(
        path,
        JSON.stringify({
          clients,
          publishers: { 'dev-publisher': ['urn:nld:oin:0001'], 'dev-subscriber': ['urn:nld:oin:0001:lvs'] },
        }),
      );
      await expect(loadOrCreateLocalConfig(path)).rejects.toThrow(
        /"dev-publisher" \(grant "urn:nld:oin:0001"\) and "dev-subscriber" \(grant "urn:nld:oin:0001:lvs"\)/,
      );
      await writeFile(
        path,
        JSON.stringify({
          clients,
          publishers: { 'dev-publisher': ['urn:nld:oin:0001'], 'dev-subscriber': ['urn:nld:oin:00012'] },
        }),
      );
      expect((await loadOrCreateLocalConfig(path)).config.publishers).toEqual({
        'dev-publisher': ['urn:nld:oin:0001'],
        'dev-subscriber': ['urn:nld:oin:00012'],
      });
      await writeFile(path, JSON.stringify({ clients }));
      await expect(loadOrCreateLocalConfig(path)).rejects.toThrow(
        /it has no "publishers" section.*"publishers": \{"dev-publisher": \[""\]\}/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the file and the problem when it is edited into something invalid', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-config-'));
    try {
      const path = join(dir, 'koerier.local.json');
      await writeFile(path, JSON.stringify({ clients: { a: { secret: 'short', scopes: [] } } }));
      await expect(loadOrCreateLocalConfig(path)).rejects.toThrow(
        `${path} is not a valid Koerier local configuration: client "a" needs a "secret" of at least 8 characters`,
      );
      await writeFile(path, '{ not json');
      await expect(loadOrCreateLocalConfig(path)).rejects.toThrow(/not JSON/);
      expect(await readFile(path, 'utf8')).toBe('{ not json'); // never overwritten
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
