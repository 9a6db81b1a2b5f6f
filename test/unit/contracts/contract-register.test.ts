/**
 * The contract register's use cases (issue 14) on memory adapters, with a parser that reads the
 * AsyncAPI messages straight from the JSON (the real parsers are exercised through the laptop
 * host in test/e2e/contract-register.test.ts), and the ingest's data contracts with each mode.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import type { DeprecationNotice } from '../../../functions/core/contracts/contract.js';
import { ContractRegister } from '../../../functions/core/contracts/contract-register.js';
import { DataContracts } from '../../../functions/core/contracts/data-contracts.js';
import {
  MemoryContractDocuments,
  MemoryContractStore,
  memoryConsumers,
} from '../../support/memory/contracts-memory-adapters.js';
import type { ContractParser } from '../../../functions/core/contracts/ports.js';
import type { JsonSchema } from '../../../functions/core/contracts/schema-compatibility.js';
import type { HttpRequest } from '../../../functions/core/http/messages.js';
import { acceptEvents } from '../../../functions/core/ingest/index.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { ENROLMENT_TYPE, enrolmentContract, enrolmentPayload, owner } from '../../support/contract-documents.js';
import { answering } from '../../support/refusals.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { ingestSettings, memoryIngest } from '../ingest/ingest-fixtures.js';

const writer: Principal = { clientId: 'registry-writer', scopes: new Set(['contracts:write']) };
const publisher: Principal = { clientId: 'school-a', scopes: new Set(['events:publish']) };
const operator: Principal = { clientId: 'ops', scopes: new Set(['contracts:read', 'admin']) };

/** Stands in for @asyncapi/parser: the messages of components.messages, each with its payload. */
const messagesParser: ContractParser = {
  async parse(_kind, text) {
    const document = JSON.parse(text) as {
      asyncapi?: string;
      components?: { messages?: Record<string, { name?: string; payload?: object }> };
    };
    if (!document.asyncapi)
      return { valid: false, errors: [{ message: 'not an AsyncAPI document', severity: 'error' }] };
    const messages = Object.entries(document.components?.messages ?? {}).map(([id, { name, payload }]) => ({
      id,
      ...(name ? { name } : {}),
      ...(payload ? { payload: payload as JsonSchema } : {}),
    }));
    return { valid: true, specVersion: document.asyncapi, messages, warnings: [] };
  },
};

function request(method: string, body: unknown, query: Record<string, string> = {}): HttpRequest {
  return {
    method,
    path: '/',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    query,
    routeKey: '',
    pathParameters: {},
    body: Buffer.from(JSON.stringify(body)),
  };
}

/** Who may publish under which sources: two schools; the registry's writer publishes nothing. */
const GRANTS = { 'school-a': ['urn:nld:oin:0001'], 'school-b': ['urn:nld:oin:0002'] };

function setup() {
  const store = new MemoryContractStore();
  const documents = new MemoryContractDocuments();
  const notices: DeprecationNotice[] = [];
  const consumers = memoryConsumers([
    { subscriptionId: 'sub-1', owner: 'school-b', types: [ENROLMENT_TYPE] },
    { subscriptionId: 'sub-2', owner: 'school-c', types: ['nl.edu.other.v1'] },
  ]);
  const register = answering(
    new ContractRegister({
      store,
      documents,
      parser: messagesParser,
      clock: () => Date.parse('2026-11-23T20:00:00Z'),
      publishGrants: async () => GRANTS,
      consumers,
      lifecycle: { contractVersionDeprecated: async (notice) => void notices.push(notice) },
      log: silentLog,
      baseUrl: 'https://koerier.example',
    }),
  );
  const publish = (version: string, payload: Record<string, unknown>) =>
    register.publish(
      writer,
      'enrolments',
      version,
      request('PUT', { kind: 'asyncapi-data', owner, contact: owner, document: enrolmentContract(payload) }),
    );
  return { store, documents, notices, register, publish };
}

describe('the contract register use cases (issue 14)', () => {
  it('EDU-6: a contract shows who consumes it: the subscriptions naming its event types', async () => {
    const { register, publish } = setup();
    expect((await publish('1.0.0', enrolmentPayload())).status).toBe(201);
    const contract = JSON.parse((await register.read(operator, 'enrolments')).body) as { consumers: unknown[] };
    expect(contract.consumers).toEqual([{ subscriptionId: 'sub-1', owner: 'school-b', types: [ENROLMENT_TYPE] }]);
  });

  it("EDU-6, EDU-7, issue 28: a contract's consumers show a caller only its own subscriptions; an operator sees every one", async () => {
    const { register, publish } = setup();
    await publish('1.0.0', enrolmentPayload());
    const consumersFor = async (principal: Principal) =>
      (JSON.parse((await register.read(principal, 'enrolments')).body) as { consumers: unknown[] }).consumers;
    const own = [{ subscriptionId: 'sub-1', owner: 'school-b', types: [ENROLMENT_TYPE] }];
    // The maintainer, and any other reader, learns nothing of other clients' subscriptions.
    expect(await consumersFor(writer)).toEqual([]);
    expect(await consumersFor({ clientId: 'school-c', scopes: new Set(['contracts:read']) })).toEqual([]);
    expect(await consumersFor({ clientId: 'school-b', scopes: new Set(['contracts:read']) })).toEqual(own);
    expect(await consumersFor(operator)).toEqual(own);
  });

  it('issue 14 item 3: a deprecation calls the lifecycle hook once, with the sunset date and the consumers', async () => {
    const { register, publish, notices } = setup();
    await publish('1.0.0', enrolmentPayload());
    const deprecated = await register.changeVersion(
      writer,
      'enrolments',
      '1.0.0',
      request('PATCH', { status: 'deprecated', sunset: '2027-01-31' }),
    );
    expect(deprecated.status).toBe(200);
    expect(notices).toEqual([
      expect.objectContaining({
        contract: 'enrolments',
        version: '1.0.0',
        sunset: '2027-01-31T00:00:00.000Z',
        consumers: [{ subscriptionId: 'sub-1', owner: 'school-b' }],
        deprecatedBy: 'registry-writer',
      }),
    ]);
    // Only the move into deprecated tells them: changing the sunset date again does not.
    await register.changeVersion(writer, 'enrolments', '1.0.0', request('PATCH', { sunset: '2027-02-28' }));
    expect(notices).toHaveLength(1);
  });

  it('EDU-21: a message removed from a version is breaking within the major version', async () => {
    const { register } = setup();
    const document = enrolmentContract(enrolmentPayload());
    await register.publish(
      writer,
      'enrolments',
      '1.0.0',
      request('PUT', { kind: 'asyncapi-data', owner, contact: owner, document }),
    );
    const without = {
      ...document,
      components: { messages: { other: { name: 'nl.edu.other.v1', payload: { type: 'object' } } } },
    };
    const refused = await register.publish(
      writer,
      'enrolments',
      '1.1.0',
      request('PUT', { kind: 'asyncapi-data', document: without }),
    );
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('message-removed');
  });

  it('EDU-22: a new contract needs an owner and a contact point with an e-mail address or URL', async () => {
    const { register } = setup();
    const document = enrolmentContract(enrolmentPayload());
    expect(
      (await register.publish(writer, 'enrolments', '1.0.0', request('PUT', { kind: 'asyncapi-data', document })))
        .status,
    ).toBe(400);
    const nameOnly = await register.publish(
      writer,
      'enrolments',
      '1.0.0',
      request('PUT', { kind: 'asyncapi-data', owner: { name: 'x' }, contact: owner, document }),
    );
    expect(nameOnly.status).toBe(400);
  });
});

describe('data contracts at the ingest (issue 14 item 3)', () => {
  async function ingestWith(mode: 'off' | 'warn' | 'enforce') {
    const { register, publish, documents, store } = setup();
    await publish('1.0.0', enrolmentPayload());
    // An operator's binding checks every publisher's events.
    expect(
      (
        await register.bind(
          operator,
          ENROLMENT_TYPE,
          request('PUT', { contract: 'enrolments', version: '1.0.0', mode }),
        )
      ).status,
    ).toBe(200);
    const dataContracts = new DataContracts({ store, documents, refreshMs: 30_000, clock: () => 0, log: silentLog });
    const { deps, queue } = memoryIngest(
      ingestSettings({ 'school-a': ['urn:nld:oin:0001'] }, { publishRatePerMinute: 1000 }),
      Date.now,
      { dataContracts },
    );
    const send = (data: unknown) =>
      acceptEvents(
        {
          method: 'POST',
          path: '/events',
          headers: { 'content-type': 'application/cloudevents+json', 'idempotency-key': randomUUID() },
          query: {},
          routeKey: 'POST /events',
          pathParameters: {},
          body: Buffer.from(
            JSON.stringify({
              specversion: '1.0',
              id: randomUUID(),
              source: 'urn:nld:oin:0001',
              type: ENROLMENT_TYPE,
              data,
            }),
          ),
        },
        publisher,
        deps,
      );
    return { send, queue, documents };
  }

  it('issue 14 item 3: enforce refuses data that breaks the schema with 400 and JSON Pointers, and queues nothing', async () => {
    const { send, queue } = await ingestWith('enforce');
    const refused = await send({ school: '1' });
    expect(refused.status).toBe(400);
    const problem = JSON.parse(refused.body) as { type: string; errors: { pointer: string; rule: string }[] };
    expect(problem.type).toBe(problemTypeUri('data-contract-violation'));
    expect(problem.errors.map((error) => [error.pointer, error.rule])).toEqual([
      ['/data/student', 'required'],
      ['/data/school', 'pattern'],
    ]);
    expect(queue.messages).toHaveLength(0);
    expect((await send({ student: 's', school: '01AB' })).status).toBe(202);
    expect(queue.messages).toHaveLength(1);
  });

  it('issue 14 item 3: warn accepts the event (202) and lists the findings as warnings', async () => {
    const { send, queue } = await ingestWith('warn');
    const accepted = await send({ school: '01AB' });
    expect(accepted.status).toBe(202);
    expect(JSON.parse(accepted.body)).toMatchObject({
      warnings: [expect.objectContaining({ pointer: '/data/student', rule: 'required', requirement: 'EDU-21' })],
    });
    expect(queue.messages).toHaveLength(1);
  });

  it('issue 14 item 3: off checks nothing', async () => {
    const { send } = await ingestWith('off');
    const accepted = await send({ school: 5 });
    expect(accepted.status).toBe(202);
    expect(JSON.parse(accepted.body)).not.toHaveProperty('warnings');
  });

  it('issue 14 item 3: the schema is read and compiled once per contract version, not per request', async () => {
    const { send, documents } = await ingestWith('enforce');
    const before = documents.reads;
    for (let index = 0; index < 5; index++) await send({ student: 's', school: '01AB' });
    expect(documents.reads - before).toBe(1);
  });
});

describe('who may bind an event type (issue 28, item 7)', () => {
  const schools = {
    a: { clientId: 'school-a', scopes: new Set(['contracts:write']) },
    b: { clientId: 'school-b', scopes: new Set(['contracts:write']) },
  };
  /** School b maintains a contract that no data can follow ({"not": {}}); the ingest of both schools with the register's bindings. */
  async function hostileSetup() {
    const context = setup();
    const { register, store, documents } = context;
    const document = enrolmentContract({ not: {} });
    expect(
      (
        await register.publish(
          schools.b,
          'refuse-all',
          '1.0.0',
          request('PUT', { kind: 'asyncapi-data', owner, contact: owner, document }),
        )
      ).status,
    ).toBe(201);
    const dataContracts = new DataContracts({ store, documents, refreshMs: 0, clock: Date.now, log: silentLog });
    const { deps } = memoryIngest(ingestSettings(GRANTS, { publishRatePerMinute: 1000 }), Date.now, { dataContracts });
    const send = (school: 'a' | 'b') =>
      acceptEvents(
        {
          method: 'POST',
          path: '/events',
          headers: { 'content-type': 'application/cloudevents+json', 'idempotency-key': randomUUID() },
          query: {},
          routeKey: 'POST /events',
          pathParameters: {},
          body: Buffer.from(
            JSON.stringify({
              specversion: '1.0',
              id: randomUUID(),
              source: GRANTS[`school-${school}`][0],
              type: ENROLMENT_TYPE,
              data: { student: 's', school: '01AB' },
            }),
          ),
        },
        { clientId: `school-${school}`, scopes: new Set(['events:publish']) },
        deps,
      );
    const bind = (principal: Principal, contract = 'refuse-all') =>
      register.bind(principal, ENROLMENT_TYPE, request('PUT', { contract, version: '1.0.0', mode: 'enforce' }));
    return { ...context, send, bind };
  }

  it("EDU-21, EDU-IN, issue 28: a publisher's binding checks only its own events; another publisher's events of the type are not refused by it", async () => {
    const { bind, send } = await hostileSetup();
    const bound = await bind(schools.b);
    expect(bound.status).toBe(200);
    expect(JSON.parse(bound.body)).toMatchObject({ scope: 'publisher', publisher: 'school-b' });
    expect((await send('b')).status).toBe(400);
    expect((await send('a')).status).toBe(202);
  });

  it('EDU-21, EDU-IN, issue 28: a client granted no source may not bind; only the binding publisher or an operator replaces or removes its binding', async () => {
    const { register, bind, store } = await hostileSetup();
    // The registry's writer maintains a contract but publishes nothing.
    await register.publish(
      writer,
      'enrolments',
      '1.0.0',
      request('PUT', { kind: 'asyncapi-data', owner, contact: owner, document: enrolmentContract(enrolmentPayload()) }),
    );
    const refused = await bind(writer, 'enrolments');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)['detail']).toContain('granted no source');
    expect(await store.getBinding(ENROLMENT_TYPE)).toBeUndefined();

    expect((await bind(schools.b)).status).toBe(200);
    expect((await register.unbind(schools.a, ENROLMENT_TYPE)).status).toBe(403);
    expect((await register.unbind(writer, ENROLMENT_TYPE)).status).toBe(403);
    expect((await register.unbind(operator, ENROLMENT_TYPE)).status).toBe(204);
    // An operator's binding, for every publisher, only an operator changes.
    expect(
      (
        await register.bind(
          operator,
          ENROLMENT_TYPE,
          request('PUT', { contract: 'enrolments', version: '1.0.0', mode: 'warn' }),
        )
      ).status,
    ).toBe(200);
    expect(await store.getBinding(ENROLMENT_TYPE)).toMatchObject({ scope: 'every-publisher' });
    expect((await register.unbind(schools.b, ENROLMENT_TYPE)).status).toBe(403);
  });

  it('EDU-21, EDU-IN, issue 28: a binding made before the rule checks every publisher, and the publisher whose events it refuses removes it', async () => {
    const { store, send, register } = await hostileSetup();
    // As any contracts:write client could bind before issue 28: no scope, every publisher's events.
    await store.putBinding({
      type: ENROLMENT_TYPE,
      contract: 'refuse-all',
      version: '1.0.0',
      message: 'enrolled',
      mode: 'enforce',
      updatedAt: '2026-11-01T00:00:00.000Z',
      updatedBy: 'registry-writer',
    });
    expect((await send('a')).status).toBe(400);
    expect((await register.unbind(schools.a, ENROLMENT_TYPE)).status).toBe(204);
    expect((await send('a')).status).toBe(202);
  });
});
