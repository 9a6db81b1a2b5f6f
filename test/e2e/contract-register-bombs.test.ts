/**
 * The contract register hardened against what a `contracts:write` client could send to stall the
 * shared gateway (issue 28, item 6), on the laptop host, where the register, the ingest and every
 * other function share one event loop as a Lambda container's requests share one: a backtracking
 * `pattern`, a document whose `$ref`s grow exponentially, a quadratic e-mail check. Each bomb is
 * sent while a neighbour publishes events, and the neighbour's publishes must stay quick. Also
 * control characters in contract metadata (item 14), the documents' Cache-Control (item 14) and
 * OpenAPI 3.2.0 contracts (issue 36, item 1; EDU-21).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { DynamoDbContractStore } from '../../functions/aws/dynamodb-contract-store.js';
import { localName } from '../../functions/config/resources.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';
import { enrolmentContract, owner } from '../support/contract-documents.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { eventually } from '../support/waiting.js';
import { problemTypeUri } from '../support/problem-types.js';

/** A neighbour's publish takes tens of milliseconds here; a stalled event loop makes it wait for as long as the stall. */
const QUICK_MS = 2_000;

let koerier: TestHost;
let writer: string;
let writerPublishes: string;
let neighbour: string;

beforeAll(async () => {
  koerier = await startTestHost({
    [settingEnv.partnersRefreshSeconds]: '1',
    [settingEnv.publishers]: JSON.stringify({
      'dev-publisher': ['urn:nld:oin:0001'],
      'dev-subscriber': [],
      'bomb-writer': ['urn:nld:oin:0009'],
    }),
  });
  writer = await koerier.host.issueToken('bomb-writer', ['contracts:read', 'contracts:write']);
  writerPublishes = await koerier.host.issueToken('bomb-writer', ['events:publish']);
  neighbour = await koerier.token('dev-publisher', ['events:publish']);
}, 60_000);
afterAll(async () => {
  await koerier?.stop();
});

/** A call as the contract writer (or as `token`), answered whatever its status. */
const call = (method: string, path: string, body?: unknown, token = writer) =>
  callApi(koerier.url, token, method, path, body);

const publishContract = (name: string, document: unknown, extra: Record<string, unknown> = {}) =>
  call('PUT', `/contracts/${name}/versions/1.0.0`, {
    kind: 'asyncapi-data',
    owner,
    contact: owner,
    document,
    ...extra,
  });

/** Publishes one event, timed from the call to the whole answer (no retry stretches it). */
async function publishEvent(token: string, source: string, type: string, data: unknown) {
  const started = Date.now();
  const event = { specversion: '1.0', id: randomUUID(), source, type, datacontenttype: 'application/json', data };
  const answer = await tryPublish(koerier.url, token, event);
  return { ...answer, ms: Date.now() - started };
}

/** Runs `bomb` while the neighbour publishes three events one after the other; the slowest of those, and what the bomb answered in how long. */
async function withNeighbour<T>(bomb: () => Promise<T>): Promise<{ result: T; bombMs: number; neighbourMs: number }> {
  const started = Date.now();
  const sent = bomb().then((result) => ({ result, bombMs: Date.now() - started }));
  const latencies: number[] = [];
  for (let i = 0; i < 3; i++) {
    const published = await publishEvent(neighbour, 'urn:nld:oin:0001:lvs', 'nl.edu.neighbour.noticed.v1', { seq: i });
    expect(published.status).toBe(202);
    latencies.push(published.ms);
  }
  return { ...(await sent), neighbourMs: Math.max(...latencies) };
}

/** Schemas that each refer to the one before twice: a few KB of text, 2^n nodes expanded. */
function referenceBomb(levels: number): Record<string, unknown> {
  const schemas: Record<string, unknown> = { s0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) {
    schemas[`s${i}`] = {
      type: 'object',
      properties: { a: { $ref: `#/components/schemas/s${i - 1}` }, b: { $ref: `#/components/schemas/s${i - 1}` } },
    };
  }
  const document = enrolmentContract({ $ref: `#/components/schemas/s${levels}` });
  return { ...document, components: { ...(document['components'] as object), schemas } };
}

describe('issue 28, item 6: a partner contract cannot stall the shared gateway', () => {
  it('SEC-28.6, EDU-21: a catastrophic pattern ("^(a+)+$") runs in linear time: the bound event is refused at once and a neighbour publishes meanwhile unaffected', async () => {
    const type = `nl.edu.bomb.${randomUUID().slice(0, 8)}.v1`;
    const name = `regex-bomb-${randomUUID().slice(0, 8)}`;
    const payload = { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } };
    expect((await publishContract(name, enrolmentContract(payload))).status).toBe(201);
    const bound = await call('PUT', `/contract-bindings/${type}`, {
      contract: name,
      version: '1.0.0',
      message: 'enrolled',
      mode: 'enforce',
    });
    expect(bound.status).toBe(200);
    const send = (value: string) => publishEvent(writerPublishes, 'urn:nld:oin:0009:bron', type, { name: value });
    await eventually('the binding to reach the ingest', async () => (await send('b')).status === 400, {
      timeoutMs: 15_000,
    });
    expect((await send('aaaa')).status).toBe(202);

    // 32 characters took about 30 s with the JavaScript engine, which backtracks 2^32 ways.
    const { result, bombMs, neighbourMs } = await withNeighbour(() => send(`${'a'.repeat(32)}!`));
    expect(result.status).toBe(400);
    expect(result.body['errors']).toEqual([expect.objectContaining({ pointer: '/data/name', rule: 'pattern' })]);
    expect(bombMs).toBeLessThan(QUICK_MS);
    expect(neighbourMs).toBeLessThan(QUICK_MS);
    // A long one too: linear, not merely faster.
    const long = await send(`${'a'.repeat(200_000)}!`);
    expect(long.status).toBe(400);
    expect(long.ms).toBeLessThan(QUICK_MS);
  }, 60_000);

  it('SEC-28.6, EDU-21: a pattern RE2 cannot run in linear time (a back-reference, a look-ahead) is refused at publish with 400 naming it', async () => {
    const payload = {
      type: 'object',
      properties: { twice: { type: 'string', pattern: '^(a+)\\1$' }, ahead: { type: 'string', pattern: '^(?=a)a+$' } },
    };
    const refused = await publishContract(`backref-${randomUUID().slice(0, 8)}`, enrolmentContract(payload));
    expect(refused.status).toBe(400);
    expect(refused.body['type']).toBe(problemTypeUri('contract-document-invalid'));
    expect(refused.body['errors']).toHaveLength(2);
    expect(refused.body['errors']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rule: 'pattern-not-linear',
          message: expect.stringContaining('/properties/twice/pattern'),
        }),
        expect.objectContaining({
          rule: 'pattern-not-linear',
          message: expect.stringContaining('/properties/ahead/pattern'),
        }),
      ]),
    );
  }, 30_000);

  it('SEC-28.6, EDU-21: a 3 KB document whose schemas each refer to the one before twice is refused at once with 400 naming the cap, and nothing is stored; a neighbour publishes meanwhile unaffected', async () => {
    const name = `ref-bomb-${randomUUID().slice(0, 8)}`;
    const document = referenceBomb(24);
    expect(JSON.stringify(document).length).toBeLessThan(4_000);
    const { result, bombMs, neighbourMs } = await withNeighbour(() => publishContract(name, document));
    expect(result.status).toBe(400);
    expect(result.body['errors']).toEqual([
      expect.objectContaining({
        rule: 'document-expansion-cap',
        requirement: 'EDU-21',
        message: expect.stringContaining('the cap is 25000 nodes'),
      }),
    ]);
    expect(bombMs).toBeLessThan(QUICK_MS);
    expect(neighbourMs).toBeLessThan(QUICK_MS);
    expect((await call('GET', `/contracts/${name}`)).status).toBe(404);
  }, 60_000);

  it('SEC-28.6, EDU-22: an e-mail address of 200,000 characters is refused by its length before any pattern runs; a neighbour publishes meanwhile unaffected', async () => {
    const email = `a@${'.'.repeat(200_000)} `;
    const { result, bombMs, neighbourMs } = await withNeighbour(() =>
      publishContract(`email-${randomUUID().slice(0, 8)}`, enrolmentContract({ type: 'object' }), {
        owner: { name: 'X', email },
      }),
    );
    expect(result.status).toBe(400);
    expect(result.body['detail']).toBe('owner.email is an e-mail address of at most 254 characters.');
    expect(bombMs).toBeLessThan(QUICK_MS);
    expect(neighbourMs).toBeLessThan(QUICK_MS);
  }, 60_000);
});

describe('issue 28, item 14: what the register gives back to other tenants', () => {
  it('SEC-28.14, EDU-22: a control character in the owner, the contact point or the description is refused with 400 naming the member', async () => {
    const document = enrolmentContract({ type: 'object' });
    const cases: [Record<string, unknown>, string][] = [
      [{ owner: { name: 'Evil\u001b[2J\u001b[31mCorp', email: 'a@example.org' } }, 'owner.name'],
      [{ contact: { name: 'Desk', email: 'desk\u0007@example.org' } }, 'contact.email'],
      [{ contact: { name: 'Desk', url: 'https://example.org/\u009b31m' } }, 'contact.url'],
      [{ description: 'line one\nline two\u001b]0;title\u0007' }, 'description'],
    ];
    for (const [fields, member] of cases) {
      const refused = await publishContract(`control-${randomUUID().slice(0, 8)}`, document, fields);
      expect(refused.status).toBe(400);
      expect(refused.body['type']).toBe(problemTypeUri('invalid-contract'));
      expect(refused.body['detail']).toMatch(
        new RegExp(`^${member.replace('.', '\\.')} holds a control character \\(U\\+00`),
      );
    }
    // Tabs and line breaks are text in a description.
    expect(
      (await publishContract(`control-${randomUUID().slice(0, 8)}`, document, { description: 'line one\n\tline two' }))
        .status,
    ).toBe(201);
    const name = `control-${randomUUID().slice(0, 8)}`;
    expect((await publishContract(name, document)).status).toBe(201);
    const patched = await call('PATCH', `/contracts/${name}`, {
      owner: { name: '\u001b[8mhidden', url: 'https://example.org' },
    });
    expect(patched.status).toBe(400);
    expect(patched.body['detail']).toContain('owner.name holds a control character (U+001B at position 0)');
  }, 60_000);

  it('SEC-28.14, EDU-22: the CLI shows a contract stored with control characters (before the rule) escaped, never as escape sequences', async () => {
    const name = `stored-${randomUUID().slice(0, 8)}`;
    const at = new Date().toISOString();
    await new DynamoDbContractStore(koerier.host.awsClients.dynamodb, localName.table('contracts')).saveContract(
      {
        name,
        kind: 'asyncapi-data',
        description: 'ok\u001b[2Jcleared',
        owner: { name: 'Evil\u001b[31mCorp\u009b1m', email: 'a@example.org' },
        contact: { name: '\u202eroCliveE', url: 'https://example.org' },
        latestVersion: '1.0.0',
        createdAt: at,
        updatedAt: at,
        updatedBy: 'someone',
      },
      undefined,
    );
    const cli: CliUser = await cliUser(koerier.url);
    try {
      const env = {
        KOERIER_CLIENT_ID: 'dev-subscriber',
        KOERIER_CLIENT_SECRET: koerier.host.localConfig.clients['dev-subscriber']!.secret,
      };
      const shown = await cli.run(['contracts', 'show', name], { env });
      expect(shown.code).toBe(0);
      // eslint-disable-next-line no-control-regex
      expect(shown.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(shown.stdout).toContain('ok\\u001b[2Jcleared');
      expect(shown.stdout).toContain('Evil\\u001b[31mCorp\\u009b1m');
      expect(shown.stdout).toContain('\\u202eroCliveE');
      const json = await cli.run(['contracts', 'show', name, '--json'], { env });
      // eslint-disable-next-line no-control-regex
      expect(json.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
      expect((JSON.parse(json.stdout) as { owner: { name: string } }).owner.name).toBe('Evil\u001b[31mCorp\u009b1m');
      const listed = await cli.run(['contracts', 'list'], { env });
      // eslint-disable-next-line no-control-regex
      expect(listed.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    } finally {
      await cli.remove();
    }
  }, 90_000);

  it('SEC-28.14, EDU-6: a contract document, served only with a token, may be kept only by that client: Cache-Control private (immutable, a year)', async () => {
    const name = `cached-${randomUUID().slice(0, 8)}`;
    expect((await publishContract(name, enrolmentContract({ type: 'object' }))).status).toBe(201);
    const document = await call('GET', `/contracts/${name}/versions/1.0.0/document`);
    expect(document.status).toBe(200);
    expect(document.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
  }, 30_000);
});

/** A webhook contract in OpenAPI 3.2.0, as EDU-21 names it: the receiver's endpoint taking a CloudEvent (structured mode), with 3.2's own members ($self, a tag's kind, a response's summary). */
function webhookContract32(): Record<string, unknown> {
  return {
    openapi: '3.2.0',
    $self: 'https://school.example.org/contracts/enrolment-webhook',
    info: { title: 'Enrolment webhook', version: '1.0.0' },
    tags: [{ name: 'events', kind: 'nav', summary: 'CloudEvents' }],
    webhooks: {
      enrolmentCreated: {
        post: {
          tags: ['events'],
          summary: 'An enrolment was created',
          requestBody: {
            required: true,
            content: { 'application/cloudevents+json': { schema: { $ref: '#/components/schemas/CloudEvent' } } },
          },
          responses: {
            '202': { summary: 'Accepted', description: 'Received; processed asynchronously.' },
            '400': { description: 'Not a CloudEvent.' },
          },
        },
      },
    },
    components: {
      schemas: {
        CloudEvent: {
          type: 'object',
          required: ['specversion', 'id', 'source', 'type'],
          properties: {
            specversion: { const: '1.0' },
            id: { type: 'string' },
            source: { type: 'string' },
            type: { type: 'string' },
            data: {},
          },
        },
      },
    },
  };
}

describe('issue 36, item 1: OpenAPI 3.2.0 webhook contracts (EDU-21)', () => {
  const publishWebhook = (name: string, document: unknown) =>
    call('PUT', `/contracts/${name}/versions/1.0.0`, { kind: 'openapi-webhook', owner, contact: owner, document });

  it('EDU-21: an OpenAPI 3.2.0 webhook contract is checked and published (201, specVersion 3.2.0), and served back byte for byte', async () => {
    const name = `webhook-32-${randomUUID().slice(0, 8)}`;
    const published = await publishWebhook(name, webhookContract32());
    expect(published.status).toBe(201);
    expect(published.body).toMatchObject({ contract: name, version: '1.0.0', specVersion: '3.2.0' });
    const served = await fetch(`${koerier.url}/contracts/${name}/versions/1.0.0/document`, {
      headers: { authorization: `Bearer ${writer}` },
    });
    expect(await served.text()).toBe(JSON.stringify(webhookContract32()));
  }, 60_000);

  it('EDU-21: an invalid OpenAPI 3.2.0 document, or one with a missing $ref target, is 400 with the findings, never 500', async () => {
    const invalid = { ...webhookContract32(), info: { title: 'no version' }, tags: [{ name: 'events', parent: 7 }] };
    const refused = await publishWebhook(`webhook-32-${randomUUID().slice(0, 8)}`, invalid);
    expect(refused.status).toBe(400);
    expect(refused.body['type']).toBe(problemTypeUri('contract-document-invalid'));
    expect(refused.body['errors']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rule: 'openapi',
          requirement: 'EDU-21',
          attribute: '/info',
          message: expect.stringContaining("'version'"),
        }),
        expect.objectContaining({ attribute: '/tags/0/parent', message: expect.stringContaining('string') }),
      ]),
    );
    const dangling = { ...webhookContract32(), components: {} };
    const missing = await publishWebhook(`webhook-32-${randomUUID().slice(0, 8)}`, dangling);
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body['errors'])).toContain('#/components/schemas/CloudEvent');
  }, 60_000);
});
