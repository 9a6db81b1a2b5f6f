/**
 * What a subscriber reads when its token endpoint fails (review #18): fixed words; the network's
 * own message goes to the operator log. Real sockets: a closed port, and a local HTTP server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialUnavailableError } from '../../../functions/core/delivery/dispatch-ports.js';
import { ClientCredentialsTokens, MAX_CACHED_TOKENS } from '../../../functions/net/client-credentials-tokens.js';
import { createSafeHttpClient } from '../../../functions/net/safe-http-client.js';
import { recordingLog } from '../../support/recording-log.js';

let server: Server;
let base: string;
let answer: { status: number; body: string } = { status: 200, body: '{}' };
const client = createSafeHttpClient({ allowLoopback: true, responseTimeoutMs: 1000 });

beforeAll(async () => {
  server = createServer((_req, res) =>
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

const credential = (tokenUrl: string) => ({
  kind: 'oauth2-client-credentials' as const,
  tokenUrl,
  clientId: 'c',
  clientSecret: 's',
});

async function failureOf(tokens: ClientCredentialsTokens, tokenUrl: string): Promise<CredentialUnavailableError> {
  try {
    await tokens.token(credential(tokenUrl));
  } catch (error) {
    expect(error).toBeInstanceOf(CredentialUnavailableError);
    return error as CredentialUnavailableError;
  }
  throw new Error('expected the token fetch to fail');
}

describe('OAuth2 client-credentials tokens for sinks', () => {
  it('review #18: a refused connection reads "the token endpoint could not be reached"; the address, port and errno go to the operator log only', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const log = recordingLog();
    const tokens = new ClientCredentialsTokens(client, Date.now, log);
    const error = await failureOf(tokens, `http://127.0.0.1:${port}/token`);
    expect(error.message).toBe('the token endpoint could not be reached');
    expect(JSON.stringify(log.lines.map((line) => line.fields))).toMatch(
      new RegExp(`ECONNREFUSED.*127\\.0\\.0\\.1:${port}`),
    );
  });

  it('review #18: what the token endpoint answers is described in fixed words, never repeated', async () => {
    const tokens = new ClientCredentialsTokens(client);
    answer = { status: 200, body: JSON.stringify({ access_token: 'abc', token_type: 'DPoP <script>' }) };
    expect((await failureOf(tokens, `${base}/token`)).message).toBe(
      'the token endpoint issued a token type other than Bearer; webhooks take Bearer tokens (WH-3)',
    );
    answer = { status: 200, body: JSON.stringify({ access_token: 'abc\r\nx-injected: 1', token_type: 'Bearer' }) };
    expect((await failureOf(tokens, `${base}/token`)).message).toBe(
      'the token endpoint issued an access token that cannot be sent as a Bearer token',
    );
    answer = { status: 503, body: 'connect ECONNREFUSED 10.0.0.1:5432' };
    expect((await failureOf(tokens, `${base}/token`)).message).toBe('the token endpoint answered 503');
    answer = {
      status: 200,
      body: JSON.stringify({ access_token: 'good-token_1', token_type: 'Bearer', expires_in: 60 }),
    };
    expect(await tokens.token(credential(`${base}/token`))).toBe('good-token_1');
  });

  it('WH-3: a container keeps at most MAX_CACHED_TOKENS tokens; the least recently fetched go, the recent stay cached', async () => {
    let fetches = 0;
    const counting = createServer((req, res) => {
      fetches++;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: `t-${req.url!.slice(1)}`, token_type: 'Bearer', expires_in: 3600 }));
    });
    await new Promise<void>((resolve) => counting.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(counting.address() as AddressInfo).port}`;
    try {
      const tokens = new ClientCredentialsTokens(client);
      for (let i = 0; i <= MAX_CACHED_TOKENS; i++) await tokens.token(credential(`${url}/${i}`));
      expect(tokens.size).toBe(MAX_CACHED_TOKENS);
      expect(fetches).toBe(MAX_CACHED_TOKENS + 1);
      // The newest is still cached; the first one fetched was let go and is fetched again.
      expect(await tokens.token(credential(`${url}/${MAX_CACHED_TOKENS}`))).toBe(`t-${MAX_CACHED_TOKENS}`);
      expect(fetches).toBe(MAX_CACHED_TOKENS + 1);
      expect(await tokens.token(credential(`${url}/0`))).toBe('t-0');
      expect(fetches).toBe(MAX_CACHED_TOKENS + 2);
      expect(tokens.size).toBe(MAX_CACHED_TOKENS);
    } finally {
      await new Promise((resolve) => counting.close(resolve));
    }
  });
});
