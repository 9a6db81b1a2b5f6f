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
import { MemoryContractDocuments, MemoryContractStore, memoryConsumers } from '../../../functions/core/contracts/memory-adapters.js';
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
    const document = JSON.parse(text) as { asyncapi?: string; components?: { messages?: Record<string, { name?: string; payload?: object }> } };
    if (!document.asyncapi) return { valid: false, errors: [{ message: 'not an AsyncAPI document', severity: 'error' }] };
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
      consumers,
      lifecycle: { contractVersionDeprecated: async (notice) => void notices.push(notice) },
      log: silentLog,
      baseUrl: 'https://koerier.example',
    }),
  );
  const publish = (version: string, payload: Record<string, unknown>) =>
    register.publish(writer, 'enrolments', version, request('PUT', { kind: 'asyncapi-data', owner, contact: owner, document: enrolmentContract(payload) }));
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
    const deprecated = await register.changeVersion(writer, 'enrolments', '1.0.0', request('PATCH', { status: 'deprecated', sunset: '2027-01-31' }));
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
    await register.publish(writer, 'enrolments', '1.0.0', request('PUT', { kind: 'asyncapi-data', owner, contact: owner, document }));
    const without = { ...document, components: { messages: { other: { name: 'nl.edu.other.v1', payload: { type: 'object' } } } } };
    const refused = await register.publish(writer, 'enrolments', '1.1.0', request('PUT', { kind: 'asyncapi-data', document: without }));
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('message-removed');
  });

  it('EDU-22: a new contract needs an owner and a contact point with an e-mail address or URL', async () => {
    const { register } = setup();
    const document = enrolmentContract(enrolmentPayload());
    expect((await register.publish(writer, 'enrolments', '1.0.0', request('PUT', { kind: 'asyncapi-data', document }))).status).toBe(400);
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
    expect((await register.bind(writer, ENROLMENT_TYPE, request('PUT', { contract: 'enrolments', version: '1.0.0', mode }))).status).toBe(200);
    const dataContracts = new DataContracts({ store, documents, refreshMs: 30_000, clock: () => 0, log: silentLog });
    const { deps, queue } = memoryIngest(ingestSettings({ 'school-a': ['urn:nld:oin:0001'] }, { publishRatePerMinute: 1000 }), Date.now, { dataContracts });
    const send = (data: unknown) =>
      acceptEvents(
        {
          method: 'POST',
          path: '/events',
          headers: { 'content-type': 'application/cloudevents+json', 'idempotency-key': randomUUID() },
          query: {},
          routeKey: 'POST /events',
          pathParameters: {},
          body: Buffer.from(JSON.stringify({ specversion: '1.0', id: randomUUID(), source: 'urn:nld:oin:0001', type: ENROLMENT_TYPE, data })),
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
