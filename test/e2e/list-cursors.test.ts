/**
 * Issue 8, item 10 (and the URL-path side of item 1) end to end on the laptop host, against
 * dynalite through the real API: a forged list cursor — garbage, base64 of the wrong JSON,
 * another client's or another subscription's partition, an oversized sort key, extra attributes
 * — is a 400 problem, never a 500; so is nothing that names a key too long to exist. A 3 KB
 * client id (from a token) creates and lists its subscriptions like any other.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

const authority = createLocalCertificateAuthority();
const LONG_CLIENT = `urn:nld:oin:${'0'.repeat(20)}:${'l'.repeat(3000)}`;
let koerier: TestHost;
let dir: string;
let receiver: HttpsReceiver;
let subscriberToken: string;
let longClientToken: string;
let subscriptionId: string;

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decoded = (cursor: string) =>
  JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;

async function call(
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; contentType: string; body: Record<string, unknown> }> {
  const answer = await callApi(koerier.url, token, method, path, body);
  return { status: answer.status, contentType: answer.headers.get('content-type') ?? '', body: answer.body };
}

function cursorIn(page: { body: Record<string, unknown> }): string {
  const next = page.body['next'];
  expect(typeof next).toBe('string');
  return new URL(next as string, 'http://x').searchParams.get('cursor')!;
}

async function subscribe(token: string, types: readonly string[]): Promise<string> {
  const created = await call(token, 'POST', '/subscriptions', {
    sink: receiver.url,
    types,
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
  });
  expect(created.status).toBe(201);
  return created.body['id'] as string;
}

function expectProblem(
  answer: { status: number; contentType: string; body: Record<string, unknown> },
  status: number,
  label: string,
): void {
  expect([answer.status, answer.contentType], label).toEqual([
    status,
    expect.stringMatching(/^application\/problem\+json/),
  ]);
  expect(answer.body['status'], label).toBe(status);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-cursors-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: `dev-subscriber,${LONG_CLIENT}`,
    [settingEnv.entitlements]: JSON.stringify({
      'dev-subscriber': [{ typePrefix: '' }],
      [LONG_CLIENT]: [{ typePrefix: '' }],
    }),
  });
  receiver = await startHttpsReceiver({ authority });
  subscriberToken = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  longClientToken = await koerier.host.issueToken(LONG_CLIENT, ['subscriptions:manage']);
  const type = `nl.example.cursors.${randomUUID().slice(0, 8)}.v1`;
  subscriptionId = await subscribe(subscriberToken, [type]);
  for (let i = 0; i < 2; i++) await subscribe(subscriberToken, [`${type}.other${i}`]);
  // Two deliveries, so the attempt history has a second page.
  const publisher = await koerier.token('dev-publisher', ['events:publish']);
  for (let i = 0; i < 2; i++) {
    const published = await tryPublish(koerier.url, publisher, {
      specversion: '1.0',
      id: randomUUID(),
      source: 'urn:nld:oin:00000001234567890000:systeem:e2e',
      type,
    });
    expect(published.status).toBe(202);
  }
  await receiver.waitForRequests(2, { timeoutMs: 20_000 });
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('list cursors and key-sized path ids on the laptop host', () => {
  it('review #1, EDU-7: a 3 KB client id creates, reads and pages through its own subscriptions', async () => {
    const first = await subscribe(longClientToken, ['nl.example.long.a']);
    const second = await subscribe(longClientToken, ['nl.example.long.b']);
    expect((await call(longClientToken, 'GET', `/subscriptions/${first}`)).body['owner']).toBe(LONG_CLIENT);
    const page = await call(longClientToken, 'GET', '/subscriptions?limit=1');
    expect(page.status).toBe(200);
    const next = await call(
      longClientToken,
      'GET',
      `/subscriptions?limit=1&cursor=${encodeURIComponent(cursorIn(page))}`,
    );
    expect(
      [...(page.body['subscriptions'] as { id: string }[]), ...(next.body['subscriptions'] as { id: string }[])].map(
        (s) => s.id,
      ),
    ).toEqual([first, second]);
    // Its cursor is no good to another client.
    expectProblem(
      await call(subscriberToken, 'GET', `/subscriptions?limit=1&cursor=${encodeURIComponent(cursorIn(page))}`),
      400,
      'another client',
    );
  });

  it('review #10: forged GET /subscriptions cursors (garbage, wrong JSON, another partition, oversized, extra attributes) → 400 problem, never 500', async () => {
    const page = await call(subscriberToken, 'GET', '/subscriptions?limit=1');
    const genuine = cursorIn(page);
    const key = decoded(genuine) as Record<string, { S: string }>;
    const forged: Record<string, string> = {
      garbage: 'garbage!',
      'not base64 JSON': '~~~~',
      'base64 of a string': cursorOf('hello'),
      'base64 of the wrong JSON': cursorOf({ pk: 'sub#1', sk: 'attempt#1' }),
      "another client's partition": cursorOf({ ...key, owner: { S: 'dev-publisher' } }),
      'oversized id (sort key of the table)': cursorOf({ ...key, id: { S: 'i'.repeat(3000) } }),
      'oversized createdAt (sort key of the index)': cursorOf({
        ...key,
        createdAt: { S: `2026-01-01T00:00:00.${'0'.repeat(1100)}Z` },
      }),
      'a number where a string belongs': cursorOf({ ...key, createdAt: { N: '1' } }),
      'an extra attribute': cursorOf({ ...key, status: { S: 'active' } }),
      'a missing attribute': cursorOf({ id: key['id'], owner: key['owner'] }),
      'far too long': 'A'.repeat(8000),
    };
    for (const [label, cursor] of Object.entries(forged))
      expectProblem(
        await call(subscriberToken, 'GET', `/subscriptions?limit=1&cursor=${encodeURIComponent(cursor)}`),
        400,
        label,
      );
    expect(
      (await call(subscriberToken, 'GET', `/subscriptions?limit=1&cursor=${encodeURIComponent(genuine)}`)).status,
    ).toBe(200);
  });

  it('review #10: forged deliveries and dead-letters cursors → 400 problem, never 500', async () => {
    const attempts = await eventually(
      'a second page of delivery attempts',
      async () => {
        const page = await call(subscriberToken, 'GET', `/subscriptions/${subscriptionId}/deliveries?limit=1`);
        return page.body['next'] ? page : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    const genuine = cursorIn(attempts);
    const { pk, sk } = decoded(genuine) as { pk: string; sk: string };
    const forged: Record<string, string> = {
      garbage: 'garbage!',
      'base64 of the wrong JSON': cursorOf({ id: { S: 'x' }, owner: { S: 'y' } }),
      "another subscription's partition": cursorOf({ pk: `sub#${randomUUID()}`, sk }),
      'oversized sort key': cursorOf({ pk, sk: `attempt#${'x'.repeat(1100)}` }),
      'an extra attribute': cursorOf({ pk, sk, expiresAt: 1 }),
      'far too long': 'A'.repeat(8000),
    };
    for (const [label, cursor] of Object.entries(forged)) {
      expectProblem(
        await call(
          subscriberToken,
          'GET',
          `/subscriptions/${subscriptionId}/deliveries?cursor=${encodeURIComponent(cursor)}`,
        ),
        400,
        `deliveries: ${label}`,
      );
      expectProblem(
        await call(
          subscriberToken,
          'GET',
          `/subscriptions/${subscriptionId}/dead-letters?cursor=${encodeURIComponent(cursor)}`,
        ),
        400,
        `dead-letters: ${label}`,
      );
    }
    // A sort key of the other list (outside the query's key condition).
    const deadLetterKey = cursorOf({ pk, sk: 'dead#000000000000001#x' });
    expectProblem(
      await call(
        subscriberToken,
        'GET',
        `/subscriptions/${subscriptionId}/deliveries?cursor=${encodeURIComponent(deadLetterKey)}`,
      ),
      400,
      'deliveries: a dead-letter key',
    );
    expectProblem(
      await call(
        subscriberToken,
        'GET',
        `/subscriptions/${subscriptionId}/dead-letters?cursor=${encodeURIComponent(genuine)}`,
      ),
      400,
      'dead-letters: an attempt key',
    );
    const second = await call(
      subscriberToken,
      'GET',
      `/subscriptions/${subscriptionId}/deliveries?limit=1&cursor=${encodeURIComponent(genuine)}`,
    );
    expect(second.status).toBe(200);
    expect(second.body['attempts']).toHaveLength(1);
  });

  it('review #1: a subscription id too long to be a key is an unknown subscription (404 problem), never a 500', async () => {
    const id = 'x'.repeat(3000);
    for (const path of [
      `/subscriptions/${id}`,
      `/subscriptions/${id}/deliveries`,
      `/subscriptions/${id}/dead-letters`,
    ]) {
      expectProblem(await call(subscriberToken, 'GET', path), 404, path.slice(0, 40));
    }
  });
});
