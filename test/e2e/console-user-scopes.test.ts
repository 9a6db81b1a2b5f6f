/**
 * EDU-2 ("only confidential clients", issue 36 item 6) on the laptop host: with the console's own
 * user pool (`koerier:consoleUserPool`) the API takes the pool's user tokens, which a public client
 * (PKCE, no secret) obtains. Such a token reads — subscriptions, dead letters, replays, contracts —
 * and is refused with 403 `insufficient_scope` wherever a partner's confidential client is needed:
 * pulling events, making, changing or deleting a subscription, redriving, resuming, and for an
 * operator the partner directory and the dead-letter queue. The pool's key set is served by a real
 * HTTP server at `<issuer>/.well-known/jwks.json`, which the host's functions fetch as in AWS; the
 * tokens carry the claims Cognito puts in its access tokens.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config/setting-names.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';

const CONSOLE_CLIENT = '5ksg7vu0consoleclient';
let jwksServer: Server;
let poolIssuer: string;
let poolKey: CryptoKey;
let koerier: TestHost;
let confidential: string;
let subscriptionId: string;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  poolKey = pair.privateKey;
  const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'pool-1', alg: 'RS256', use: 'sig' } as JWK] };
  jwksServer = createServer((request, response) => {
    const found = request.url === '/eu-west-1_ConsolePool/.well-known/jwks.json';
    response
      .writeHead(found ? 200 : 404, { 'content-type': 'application/json' })
      .end(JSON.stringify(found ? jwks : {}));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  poolIssuer = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/eu-west-1_ConsolePool`;
  koerier = await startTestHost({
    [settingEnv.consoleUserPoolIssuer]: poolIssuer,
    [settingEnv.consoleUserPoolClientId]: CONSOLE_CLIENT,
  });
  confidential = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
  const created = await call('POST', '/subscriptions', confidential, {
    delivery: 'pull',
    types: [`nl.example.console.${randomUUID().slice(0, 8)}.v1`],
  });
  expect(created.status, created.text).toBe(201);
  subscriptionId = created.body['id'] as string;
});

afterAll(async () => {
  await koerier?.stop();
  await new Promise<void>((resolve) => (jwksServer ? jwksServer.close(() => resolve()) : resolve()));
});

/** A console user's access token as Cognito issues it to the console's app client. */
function consoleUser(groups: readonly string[]): Promise<string> {
  return new SignJWT({
    client_id: CONSOLE_CLIENT,
    token_use: 'access',
    scope: 'openid email',
    username: 'j.jansen',
    'cognito:groups': [...groups],
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'pool-1' })
    .setSubject(randomUUID())
    .setIssuer(poolIssuer)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(poolKey);
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly text: string;
  readonly headers: Headers;
}

const call = (method: string, path: string, token: string, body?: unknown): Promise<Answer> =>
  callApi(koerier.url, token, method, path, body);

function expectInsufficientScope(answer: Answer, scope: string, what: string): void {
  expect(answer.status, `${what}: ${answer.text}`).toBe(403);
  expect(answer.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
  expect(answer.headers.get('www-authenticate'), what).toBe(
    `Bearer realm="koerier", error="insufficient_scope", scope="${scope}"`,
  );
  expect(answer.body['detail'], what).toContain('confidential client');
}

describe('EDU-2: a console user token reads and never acts for a confidential client (issue 36, item 6)', () => {
  it('EDU-2: a console user is refused with 403 insufficient_scope on receive, on subscription create, PATCH and DELETE, on redrive and resume; the subscription stays as it was', async () => {
    const user = await consoleUser(['partner:dev-subscriber']);
    const base = `/subscriptions/${subscriptionId}`;
    expectInsufficientScope(await call('POST', `${base}/events/receive`, user, {}), 'events:consume', 'receive');
    expectInsufficientScope(
      await call('POST', '/subscriptions', user, { delivery: 'pull', types: ['nl.example.console.other.v1'] }),
      'subscriptions:manage',
      'create',
    );
    expectInsufficientScope(
      await call('PATCH', base, user, { types: ['nl.example.console.changed.v1'] }),
      'subscriptions:manage',
      'PATCH',
    );
    expectInsufficientScope(await call('DELETE', base, user), 'subscriptions:manage', 'DELETE');
    expectInsufficientScope(
      await call('POST', `${base}/dead-letters/redrive`, user, { all: true }),
      'subscriptions:manage',
      'redrive',
    );
    expectInsufficientScope(await call('POST', `${base}/resume`, user, {}), 'subscriptions:manage', 'resume');

    const after = await call('GET', base, confidential);
    expect(after.status).toBe(200);
    expect(after.body['types']).toEqual([expect.stringMatching(/^nl\.example\.console\.[0-9a-f]{8}\.v1$/)]);
    const listed = await call('GET', '/subscriptions?limit=100', confidential);
    expect((listed.body['subscriptions'] as unknown[]).length).toBe(1);
  });

  it('EDU-2: a console user reads its partner’s subscription, dead letters, replays and the contract register', async () => {
    const user = await consoleUser(['partner:dev-subscriber']);
    const base = `/subscriptions/${subscriptionId}`;
    const listed = await call('GET', '/subscriptions?limit=100', user);
    expect(listed.status, listed.text).toBe(200);
    expect((listed.body['subscriptions'] as { id: string }[]).map((s) => s.id)).toEqual([subscriptionId]);
    for (const path of [base, `${base}/dead-letters`, `${base}/replays`, '/contracts']) {
      const answer = await call('GET', path, user);
      expect(answer.status, `${path}: ${answer.text}`).toBe(200);
    }
    // Another partner's user sees nothing of it.
    expect((await call('GET', base, await consoleUser(['partner:dev-publisher']))).status).toBe(404);
  });

  it('EDU-2: an operator of the console reads every partner’s subscriptions, and is refused the partner directory and the dead-letter queue', async () => {
    const operator = await consoleUser(['partner:operations', 'admin']);
    const every = await call('GET', '/subscriptions?owner=*&limit=100', operator);
    expect(every.status, every.text).toBe(200);
    expect((every.body['subscriptions'] as { id: string }[]).map((s) => s.id)).toContain(subscriptionId);
    expect((await call('GET', `/subscriptions/${subscriptionId}/dead-letters`, operator)).status).toBe(200);

    expectInsufficientScope(await call('GET', '/clients', operator), 'admin', 'list clients');
    expectInsufficientScope(
      await call('PUT', '/clients/console-made', operator, { name: 'Console made' }),
      'admin',
      'put client',
    );
    expectInsufficientScope(
      await call('POST', '/deliveries/dead-letter-queue/redrive', operator, {}),
      'admin',
      'queue redrive',
    );
    expectInsufficientScope(
      await call('DELETE', `/subscriptions/${subscriptionId}`, operator),
      'subscriptions:manage',
      'operator DELETE',
    );
    expect((await call('GET', `/subscriptions/${subscriptionId}`, confidential)).status).toBe(200);
  });
});
