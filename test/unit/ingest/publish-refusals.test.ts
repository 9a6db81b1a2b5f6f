/**
 * What the ingest (functions/core/ingest) refuses besides the CloudEvents rules, and how each
 * refusal is answered and counted: the operational namespace, data contracts in `enforce` and
 * `warn`, upload references, the claim check's own attributes, and the rate a takeover does not
 * charge again. The PublishRejected metric counts every refusal by its problem type's slug
 * (issue 13 item 4, docs/OPERATIONS.md "Metrics"), so the tests read it through a recording
 * `Metrics` rather than the log lines, whose wording is free.
 */
import { createHash, randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import type { InMemoryClaimCheckStore } from '../../support/memory/claim-check-memory-adapters.js';
import { grantUpload, UPLOAD_PUBLISH_WINDOW_MS } from '../../../functions/core/claim-check/uploads.js';
import { DataContracts } from '../../../functions/core/contracts/data-contracts.js';
import { MemoryContractDocuments, MemoryContractStore } from '../../support/memory/contracts-memory-adapters.js';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import { acceptEvents, type IngestDependencies } from '../../../functions/core/ingest/index.js';
import type { InMemoryInboundQueue } from '../../support/memory/ingest-memory-adapters.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { noMetrics, type Metrics } from '../../../functions/core/ports/metrics.js';
import { ENROLMENT_TYPE, enrolmentPayload } from '../../support/contract-documents.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { cloudEvent, ingestSettings, memoryIngest } from './ingest-fixtures.js';
import { recordingLog } from '../../support/recording-log.js';

const PUBLISHER: Principal = { clientId: 'partner-a', scopes: new Set(['events:publish']) };
const SOURCE = 'urn:nld:oin:00000001823288444000:systeem';
const START = Date.UTC(2026, 2, 1, 12, 0, 10);

let now: number;
let queue: InMemoryInboundQueue;
let store: InMemoryClaimCheckStore;
let rejected: string[];
let deps: IngestDependencies;

beforeEach(() => {
  now = START;
  rejected = [];
  const metrics: Metrics = { ...noMetrics, publishRejected: (rule) => void rejected.push(rule) };
  const settings = ingestSettings(
    { 'partner-a': ['urn:nld:oin:00000001823288444000:'] },
    { idempotency: { ttlSeconds: 3600, lockSeconds: 5 } },
  );
  ({ deps, queue, store } = memoryIngest(settings, () => now, { metrics }));
});

const event = (overrides: Record<string, unknown> = {}) => cloudEvent(`${SOURCE}:x`, overrides);

function request(body: unknown, batch = false): HttpRequest {
  return {
    method: 'POST',
    path: '/events',
    headers: {
      'content-type': batch ? 'application/cloudevents-batch+json' : 'application/cloudevents+json',
      'idempotency-key': randomUUID(),
    },
    query: {},
    routeKey: 'POST /events',
    pathParameters: {},
    body: Buffer.from(JSON.stringify(body), 'utf8'),
  };
}

const json = (response: HttpResponse) => JSON.parse(response.body) as Record<string, unknown>;

describe('refusals are answered by their kind and counted by their rule', () => {
  it('EDU-IN, issue 13 item 4: an invalid event is 400 invalid-cloudevent, counted under that slug', async () => {
    const response = await acceptEvents(request(event({ id: '' })), PUBLISHER, deps);
    expect(response.status).toBe(400);
    expect(json(response)['type']).toBe(problemTypeUri('invalid-cloudevent'));
    expect(rejected).toEqual(['invalid-cloudevent']);
  });

  it('WH-7, EDU-20: past the rate the answer is 429 rate-limited "Too Many Requests", counted as rate-limited', async () => {
    for (let n = 0; n < 3; n++) expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
    const refused = await acceptEvents(request(event()), PUBLISHER, deps);
    expect(json(refused)).toMatchObject({
      status: 429,
      type: problemTypeUri('rate-limited'),
      title: 'Too Many Requests',
    });
    expect(rejected).toEqual(['rate-limited']);
  });

  it('EDU-IN: an ungranted source is 403 source-not-granted "Forbidden"; a single event is named without a batch index', async () => {
    const response = await acceptEvents(
      request(event({ source: 'urn:nld:oin:00000002222222222000:systeem' })),
      PUBLISHER,
      deps,
    );
    expect(json(response)).toMatchObject({
      status: 403,
      type: problemTypeUri('source-not-granted'),
      title: 'Source not granted',
    });
    const errors = json(response)['errors'] as Record<string, unknown>[];
    expect(errors).toEqual([
      expect.objectContaining({ attribute: 'source', rule: 'publish-grant', requirement: 'EDU-IN' }),
    ]);
    expect(errors[0]).not.toHaveProperty('index');
    expect(rejected).toEqual(['source-not-granted']);
    expect(queue.messages).toHaveLength(0);
  });

  it("EDU-1: an event carrying the claim check's own attribute is 400 reserved-attribute, counted, and nothing is stored", async () => {
    const response = await acceptEvents(request(event({ koerierdatasize: 12 })), PUBLISHER, deps);
    expect(json(response)).toMatchObject({ status: 400, type: problemTypeUri('reserved-attribute') });
    expect(rejected).toEqual(['reserved-attribute']);
    expect(queue.messages).toHaveLength(0);
  });
});

describe("Koerier's operational namespace (EDU-IN)", () => {
  it('EDU-IN: no publisher may publish a dev.koerier. type: 403 type-reserved naming the attribute, counted, nothing stored', async () => {
    const response = await acceptEvents(
      request(event({ type: 'dev.koerier.subscription.suspended' })),
      PUBLISHER,
      deps,
    );
    expect(json(response)).toMatchObject({
      status: 403,
      type: problemTypeUri('type-reserved'),
      title: 'Reserved event type',
    });
    expect(json(response)['errors']).toEqual([
      { attribute: 'type', rule: 'reserved-type', requirement: 'EDU-IN', message: expect.any(String) },
    ]);
    expect(rejected).toEqual(['type-reserved']);
    expect(queue.messages).toHaveLength(0);
  });

  it('EDU-IN: in a batch the reserved members are named by index, and the others are not stored either', async () => {
    const members = [event(), event({ type: 'dev.koerier.delivery.deadlettered' }), event()];
    const response = await acceptEvents(request(members, true), PUBLISHER, deps);
    expect(response.status).toBe(403);
    expect(json(response)['errors']).toEqual([expect.objectContaining({ rule: 'reserved-type', index: 1 })]);
    expect(queue.messages).toHaveLength(0);
  });
});

describe('data contracts at the ingest (issue 14 item 3)', () => {
  async function bind(mode: 'warn' | 'enforce'): Promise<void> {
    const contracts = new MemoryContractStore();
    const documents = new MemoryContractDocuments();
    await documents.putSchemas('enrolments', '1.0.0', { enrolled: enrolmentPayload() });
    await contracts.putBinding({
      type: ENROLMENT_TYPE,
      contract: 'enrolments',
      version: '1.0.0',
      message: 'enrolled',
      mode,
      updatedAt: '',
      updatedBy: 'x',
    });
    deps = {
      ...deps,
      dataContracts: new DataContracts({
        store: contracts,
        documents,
        refreshMs: 30_000,
        clock: () => 0,
        log: silentLog,
      }),
    };
  }
  const enrolment = (data: unknown) => event({ type: ENROLMENT_TYPE, data });

  it('EDU-21, issue 14 item 3: enforce refuses a batch with 400 "Data Contract Violation", the findings on data naming their member; counted', async () => {
    await bind('enforce');
    const response = await acceptEvents(
      request([enrolment({ student: 's', school: '01AB' }), enrolment({ student: 's' })], true),
      PUBLISHER,
      deps,
    );
    expect(json(response)).toMatchObject({
      status: 400,
      type: problemTypeUri('data-contract-violation'),
      title: 'Data Contract Violation',
    });
    expect(json(response)['errors']).toEqual([
      expect.objectContaining({ attribute: 'data', pointer: '/data/school', rule: 'required', index: 1 }),
    ]);
    expect(rejected).toEqual(['data-contract-violation']);
    expect(queue.messages).toHaveLength(0);
  });

  it('EDU-21, issue 14 item 3: for a single event the finding names no member', async () => {
    await bind('enforce');
    const errors = json(await acceptEvents(request(enrolment({ student: 's' })), PUBLISHER, deps))['errors'] as Record<
      string,
      unknown
    >[];
    expect(errors).toEqual([
      expect.objectContaining({ attribute: 'data', pointer: '/data/school', requirement: 'EDU-21' }),
    ]);
    expect(errors[0]).not.toHaveProperty('index');
  });

  it('EDU-21, issue 14 item 3: warn accepts a batch; a finding of one member comes back with its index, different findings apart', async () => {
    await bind('warn');
    const members = [
      enrolment({ student: 's', school: '01AB' }),
      enrolment({ student: 's' }),
      enrolment({ school: '01AB' }),
    ];
    const response = await acceptEvents(request(members, true), PUBLISHER, deps);
    expect(response.status).toBe(202);
    const warnings = json(response)['warnings'] as Record<string, unknown>[];
    expect(warnings).toEqual([
      expect.objectContaining({ attribute: 'data', pointer: '/data/school', rule: 'required', index: 1 }),
      expect.objectContaining({ attribute: 'data', pointer: '/data/student', rule: 'required', index: 2 }),
    ]);
    for (const warning of warnings) expect(warning).not.toHaveProperty('indexes');
    expect(queue.messages).toHaveLength(3);
  });
});

describe('events referring to an upload (EDU-1)', () => {
  const bytes = Buffer.from('a large enrolment list');
  const digest = `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;

  async function upload(publisher = 'partner-a'): Promise<string> {
    const grant = await grantUpload(Buffer.from(JSON.stringify({ size: bytes.length, digest })), publisher, {
      ...deps.claimCheck,
      now: () => now,
    });
    const { dataref, uploadid } = JSON.parse(grant.body) as { dataref: string; uploadid: string };
    await store.put(`uploads/${uploadid}`, { bytes, contentType: 'application/octet-stream', form: 'base64' });
    return dataref;
  }

  it("EDU-1: the publisher's complete upload is queued with Koerier's data URL in place of the upload's", async () => {
    const dataref = await upload();
    expect((await acceptEvents(request(event({ dataref })), PUBLISHER, deps)).status).toBe(202);
    expect(JSON.parse(queue.messages[0]!.body)).toMatchObject({
      dataref: expect.stringMatching(/^https:\/\/koerier\.example\/payloads\/[^/]+$/),
    });
  });

  it("EDU-1: another client's upload is 400 upload-unknown, not an outage (503), and nothing is stored", async () => {
    const dataref = await upload('partner-b');
    const response = await acceptEvents(request(event({ dataref })), PUBLISHER, deps);
    expect(json(response)).toMatchObject({ status: 400, type: problemTypeUri('upload-unknown') });
    expect(queue.messages).toHaveLength(0);
  });

  it('EDU-1, issue 13 item 4: a refused upload reference is logged as a refusal and counted under its rule, as every other refusal is', async () => {
    const log = recordingLog();
    deps = { ...deps, log };
    const dataref = await upload('partner-b');
    await acceptEvents(request(event({ dataref })), PUBLISHER, deps);
    expect(rejected).toEqual(['upload-unknown']);
    expect(log.lines.filter((line) => line.message === 'events rejected').map((line) => line.fields)).toEqual([
      {
        publisher: 'partner-a',
        status: 400,
        type: problemTypeUri('upload-unknown'),
        correlationId: expect.any(String),
      },
    ]);
  });

  it('EDU-1: an upload past its publish window is 400 upload-unknown', async () => {
    const dataref = await upload();
    now += UPLOAD_PUBLISH_WINDOW_MS + 1;
    expect(json(await acceptEvents(request(event({ dataref })), PUBLISHER, deps))).toMatchObject({
      status: 400,
      type: problemTypeUri('upload-unknown'),
    });
    expect(queue.messages).toHaveLength(0);
  });
});

describe('the rate and a takeover (EDU-20, EDU-IDEM-15)', () => {
  it('EDU-20, EDU-IDEM-15: an attempt taken over after its lock does not count against the rate a second time', async () => {
    const { inbound } = deps;
    let started!: () => void;
    const hung = new Promise<void>((resolve) => (started = resolve));
    let calls = 0;
    // The first attempt's queue write never returns, as if its container died after the claim.
    deps = {
      ...deps,
      inbound: {
        send: (messages) => (calls++ === 0 ? (started(), new Promise<void>(() => {})) : inbound.send(messages)),
      },
    };
    const first = request(event());
    void acceptEvents(first, PUBLISHER, deps);
    await hung;
    for (let n = 1; n < 3; n++) expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
    // Past the lock, still within the rate's minute, which the three attempts have used up.
    now += 6_000;
    const takeover = await acceptEvents(first, PUBLISHER, deps);
    expect(takeover.status).toBe(202);
    expect(takeover.headers['idempotent-replayed']).toBe('true');
    expect(queue.messages).toHaveLength(3);
    expect(rejected).toEqual([]);
  });
});
