/**
 * The `koerier` CLI against older gateways (issue 16: "leave a clear 'not yet' where they have not
 * landed"): real HTTP servers that answer as a Koerier from before replays and the contract register
 * did (an unknown route is a 404 problem), and as one whose replays cannot be cancelled yet and whose
 * register is read-only (a known path with another method is a 405). The CLI must say that the
 * feature is not yet available there and exit 4, and must still tell an unknown id apart from a
 * missing route.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enrolmentContract, enrolmentPayload } from '../support/contract-documents.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';

vi.setConfig({ testTimeout: 60_000 });

const TOKEN = 'older-gateway-token';
const SUBSCRIPTION = '7d0c8f9e-0000-4000-8000-000000000001';
const REPLAY = '7d0c8f9e-0000-4000-8000-0000000000aa';

/** A route's answer: a body (200), or a status with a body. */
type Answer = unknown | { readonly httpStatus: number; readonly body: unknown };
type Routes = Readonly<Record<string, Readonly<Record<string, (body: string) => Answer>>>>;

/** What each older gateway serves under /v1: path → method → body. Anything else is 404, or 405 for a known path. */
const withoutReplaysOrRegister: Routes = {
  [`/v1/subscriptions/${SUBSCRIPTION}`]: { GET: () => ({ id: SUBSCRIPTION, status: 'active' }) },
};
const withoutCancelOrWrites: Routes = {
  ...withoutReplaysOrRegister,
  [`/v1/subscriptions/${SUBSCRIPTION}/replays`]: {
    GET: () => ({ replays: [{ id: REPLAY, state: 'running' }] }),
    POST: () => ({ id: REPLAY }),
  },
  [`/v1/subscriptions/${SUBSCRIPTION}/replays/${REPLAY}`]: { GET: () => ({ id: REPLAY, state: 'running' }) },
  '/v1/contracts': {
    GET: () => ({ contracts: [{ name: 'enrolments', kind: 'asyncapi-data', latestVersion: '1.0.0' }] }),
  },
  '/v1/contracts/enrolments': { GET: () => ({ name: 'enrolments', versions: [] }) },
  '/v1/contracts/enrolments/versions/1.0.0': {
    GET: () => ({ contract: 'enrolments', version: '1.0.0', status: 'active' }),
  },
};
/** A register from before YAML documents (issue 14 item 2): the publish body has no `mediaType` member yet. */
const withoutMediaTypes: Routes = {
  '/v1/contracts': { GET: () => ({ contracts: [] }) },
  '/v1/contracts/enrolments/versions/1.0.0': {
    PUT: (body) => {
      const members = Object.keys(JSON.parse(body) as object);
      if (members.includes('mediaType')) {
        const detail = `Unknown member(s): mediaType; expected kind, description, owner, contact, status, sunset, eventTypes, document.`;
        return {
          httpStatus: 400,
          body: {
            type: 'https://koerier.dev/problems/invalid-contract',
            title: 'Invalid Contract',
            status: 400,
            detail,
          },
        };
      }
      return {
        httpStatus: 201,
        body: {
          contract: 'enrolments',
          version: '1.0.0',
          status: 'active',
          specVersion: '3.0.0',
          eventTypes: [],
          checksum: 'sha-256=:x:',
        },
      };
    },
  },
};

interface OlderGateway {
  readonly url: string;
  /** Every request it was sent: method, path, whether it carried an Idempotency-Key. */
  readonly requests: { method: string; path: string; idempotencyKey: boolean }[];
  /** The bodies of the requests that had one, with their Idempotency-Key. */
  readonly bodies: { key: string | undefined; body: string }[];
  close(): Promise<void>;
}

async function olderGateway(routes: Routes): Promise<OlderGateway> {
  const requests: OlderGateway['requests'] = [];
  const bodies: OlderGateway['bodies'] = [];
  const problem = (res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/problem+json', ...headers }).end(
      JSON.stringify({
        type: 'about:blank',
        title: status === 404 ? 'Not Found' : 'Method Not Allowed',
        status,
        detail,
      }),
    );
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (body) bodies.push({ key: req.headers['idempotency-key']?.toString(), body });
      const path = new URL(req.url ?? '/', 'http://gateway').pathname;
      requests.push({ method: req.method ?? '', path, idempotencyKey: req.headers['idempotency-key'] !== undefined });
      if (path === '/oauth/token' && req.method === 'POST') {
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 300 }));
      }
      if (req.headers['authorization'] !== `Bearer ${TOKEN}`) return problem(res, 401, 'No valid token.');
      const methods = routes[path];
      if (!methods) return problem(res, 404, `There is no resource at ${path}.`);
      const answer = methods[req.method ?? ''];
      if (!answer)
        return problem(res, 405, `${req.method} is not allowed here.`, { allow: Object.keys(methods).join(', ') });
      const given = answer(body);
      const { httpStatus: status, body: json } =
        given && typeof given === 'object' && 'httpStatus' in given
          ? (given as { httpStatus: number; body: unknown })
          : { httpStatus: 200, body: given };
      res
        .writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' })
        .end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/v1`,
    requests,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let oldest: OlderGateway;
let older: OlderGateway;
let cli: CliUser;
let contractFile: string;
const env = (gateway: OlderGateway) => ({
  KOERIER_URL: gateway.url,
  KOERIER_TOKEN_URL: `${new URL(gateway.url).origin}/oauth/token`,
  KOERIER_CLIENT_ID: 'a-partner',
  KOERIER_CLIENT_SECRET: 'a-partner-secret',
});

beforeAll(async () => {
  oldest = await olderGateway(withoutReplaysOrRegister);
  older = await olderGateway(withoutCancelOrWrites);
  cli = await cliUser(oldest.url);
  contractFile = join(cli.cwd, 'enrolments.json');
  await writeFile(contractFile, JSON.stringify(enrolmentContract(enrolmentPayload())));
});
afterAll(async () => {
  await cli?.remove();
  await oldest?.close();
  await older?.close();
});

describe('koerier against a gateway without replays or the contract register', () => {
  it('EDU-18: replay cancel says replays are not yet available (exit 4), and "no subscription" for an unknown one', async () => {
    const cancel = await cli.run(['replay', 'cancel', SUBSCRIPTION, REPLAY], { env: env(oldest) });
    expect(cancel.code).toBe(4);
    expect(cancel.stderr).toBe(`koerier: replay is not yet available on this gateway (${oldest.url})\n`);
    const unknown = await cli.run(['replay', 'cancel', '7d0c8f9e-0000-4000-8000-00000000ffff', REPLAY], {
      env: env(oldest),
    });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('no subscription 7d0c8f9e-0000-4000-8000-00000000ffff');
  });

  it('EDU-6: contracts publish, update, deprecate and list say the contract register is not yet available (exit 4); the publish is sent once, not retried', async () => {
    const before = oldest.requests.length;
    for (const args of [
      ['contracts', 'publish', 'enrolments', '1.0.0', contractFile, '--owner', 'O', '--owner-email', 'o@example.org'],
      ['contracts', 'update', 'enrolments', '--description', 'x'],
      ['contracts', 'deprecate', 'enrolments', '1.0.0', '--sunset', '2027-06-01'],
      ['contracts', 'list'],
    ]) {
      const run = await cli.run(args, { env: env(oldest) });
      expect(run.code, args.join(' ')).toBe(4);
      expect(run.stderr).toBe(`koerier: the contract register is not yet available on this gateway (${oldest.url})\n`);
    }
    const puts = oldest.requests.slice(before).filter((request) => request.method === 'PUT');
    expect(puts).toEqual([{ method: 'PUT', path: '/v1/contracts/enrolments/versions/1.0.0', idempotencyKey: true }]);
  });
});

describe('koerier against a gateway whose replays cannot be cancelled and whose register is read-only', () => {
  it('EDU-18: replay cancel says cancelling is not yet available (exit 4), while an unknown replay stays a plain 404', async () => {
    const cancel = await cli.run(['replay', 'cancel', SUBSCRIPTION, REPLAY], { env: env(older) });
    expect(cancel.code).toBe(4);
    expect(cancel.stderr).toBe(`koerier: cancelling a replay is not yet available on this gateway (${older.url})\n`);
    const unknown = await cli.run(['replay', 'cancel', SUBSCRIPTION, '7d0c8f9e-0000-4000-8000-0000000000bb'], {
      env: env(older),
    });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('404 Not Found');
    expect(unknown.stderr).not.toContain('not yet available');
    const listed = await cli.run(['replay', 'list', SUBSCRIPTION, '--json'], { env: env(older) });
    expect(listed.code, listed.stderr).toBe(0);
  });

  it('EDU-6: the register is read (contracts list works) but publish, update and deprecate say that change is not yet available (exit 4)', async () => {
    const listed = await cli.run(['contracts', 'list', '--json'], { env: env(older) });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'enrolments' })]);
    const cases: [string[], string][] = [
      [['contracts', 'publish', 'enrolments', '1.1.0', contractFile], 'publishing a contract'],
      [['contracts', 'update', 'enrolments', '--description', 'x'], "changing a contract's metadata"],
      [['contracts', 'deprecate', 'enrolments', '1.0.0', '--sunset', '2027-06-01'], 'deprecating a contract version'],
    ];
    for (const [args, what] of cases) {
      const run = await cli.run(args, { env: env(older) });
      expect(run.code, args.join(' ')).toBe(4);
      expect(run.stderr).toBe(`koerier: ${what} is not yet available on this gateway (${older.url})\n`);
    }
    // A version the read-only register does not have is its own 404, not a missing route.
    const unknownVersion = await cli.run(['contracts', 'deprecate', 'enrolments', '9.9.9', '--sunset', '2027-06-01'], {
      env: env(older),
    });
    expect(unknownVersion.code).toBe(4);
    expect(unknownVersion.stderr).not.toContain('not yet available');
  });
});

describe('koerier against a register from before YAML documents', () => {
  it('EDU-21: contracts publish declares the media type; refused as an unknown member (400), it sends the document again without it under a new Idempotency-Key, and is published', async () => {
    const register = await olderGateway(withoutMediaTypes);
    try {
      const yaml = join(cli.cwd, 'enrolments.yaml');
      await writeFile(yaml, 'asyncapi: 3.0.0\ninfo:\n  title: Enrolments\n  version: 1.0.0\n');
      const published = await cli.run(
        ['contracts', 'publish', 'enrolments', '1.0.0', yaml, '--owner', 'O', '--owner-email', 'o@example.org'],
        {
          env: env(register),
        },
      );
      expect(published.code, published.stderr).toBe(0);
      expect(published.stdout).toContain('Published enrolments 1.0.0');
      const puts = register.bodies
        .filter(({ key }) => key !== undefined)
        .map(({ key, body }) => ({ key, body: JSON.parse(body) as Record<string, unknown> }));
      expect(puts).toHaveLength(2);
      expect(puts[0]!.body).toMatchObject({
        kind: 'asyncapi-data',
        mediaType: 'application/vnd.aai.asyncapi+yaml',
        document: 'asyncapi: 3.0.0\ninfo:\n  title: Enrolments\n  version: 1.0.0\n',
      });
      expect(puts[1]!.body).not.toHaveProperty('mediaType');
      expect(puts[1]!.body['document']).toBe(puts[0]!.body['document']);
      expect(puts[1]!.key).not.toBe(puts[0]!.key);
    } finally {
      await register.close();
    }
  });
});
