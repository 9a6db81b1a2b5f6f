/**
 * Issue 33, ORD-1: `ordering.withoutKey: "refuse"` at the ingest. An event without the key of an
 * ordered subscription that refuses such events, and that the router would give it (its filters,
 * an abonnement's kenmerken, the owner's entitlement), is refused before anything is stored; the
 * list of such subscriptions is read once per time to live per container, and an empty list costs
 * nothing more.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { ingestCloudEvent } from '../../../functions/app/zgw-ports.js';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import { KoerierError } from '../../../functions/core/http/problems.js';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import { acceptEvents, type IngestDependencies } from '../../../functions/core/ingest/index.js';
import {
  cachedOrderingKeyRequirements,
  type KeyRequiringSubscriptionSource,
} from '../../../functions/core/ingest/ordering-key-requirements.js';
import type { RouteCandidate } from '../../../functions/core/routing/matcher.js';
import type { Entitlements } from '../../../functions/core/subscriptions/entitlements.js';
import { noMetrics, type Metrics } from '../../../functions/core/ports/metrics.js';
import type { InMemoryInboundQueue } from '../../support/memory/ingest-memory-adapters.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { cloudEvent, ingestSettings, memoryIngest } from './ingest-fixtures.js';

const PUBLISHER: Principal = { clientId: 'partner-a', scopes: new Set(['events:publish']) };
const SOURCE = 'urn:nld:oin:00000001823288444000:systeem';
const TYPE = 'nl.edu.leerling.ingeschreven';
const TTL_MS = 5_000;

const ordered = (overrides: Partial<RouteCandidate> = {}): RouteCandidate => ({
  subscriptionId: 'sub-ordered',
  owner: 'school-b',
  match: { types: [TYPE] },
  contentMode: 'structured',
  batchSupported: false,
  delivery: 'push',
  ordering: { key: 'partitionkey', withoutKey: 'refuse', onFailure: 'block' },
  ...overrides,
});

/** The route index's list, counting its reads. */
class CountingSource implements KeyRequiringSubscriptionSource {
  reads = 0;
  failing = false;
  constructor(public list: RouteCandidate[]) {}
  async keyRequiringSubscriptions(): Promise<RouteCandidate[]> {
    this.reads++;
    if (this.failing) throw new Error('routes table unavailable');
    return this.list;
  }
}

let now: number;
let queue: InMemoryInboundQueue;
let deps: IngestDependencies;
let source: CountingSource;
let entitlementReads: number;
let entitlements: Entitlements;
let rejected: string[];

beforeEach(() => {
  now = Date.UTC(2026, 10, 29, 12, 0, 10);
  rejected = [];
  entitlementReads = 0;
  entitlements = new Map([['school-b', [{ typePrefix: 'nl.edu.leerling' }]]]);
  source = new CountingSource([ordered()]);
  const metrics: Metrics = { ...noMetrics, publishRejected: (rule) => void rejected.push(rule) };
  const settings = ingestSettings(
    { 'partner-a': ['urn:nld:oin:00000001823288444000:'] },
    { publishRatePerMinute: 1000 },
  );
  ({ deps, queue } = memoryIngest(settings, () => now, {
    metrics,
    orderingKeys: {
      requirements: cachedOrderingKeyRequirements(source, TTL_MS, () => now),
      entitlements: async () => {
        entitlementReads++;
        return entitlements;
      },
    },
  }));
});

const event = (overrides: Record<string, unknown> = {}) => cloudEvent(`${SOURCE}:x`, { type: TYPE, ...overrides });

function request(body: unknown, options: { batch?: boolean; key?: string } = {}): HttpRequest {
  return {
    method: 'POST',
    path: '/events',
    headers: {
      'content-type': options.batch ? 'application/cloudevents-batch+json' : 'application/cloudevents+json',
      'idempotency-key': options.key ?? randomUUID(),
    },
    query: {},
    routeKey: 'POST /events',
    pathParameters: {},
    body: Buffer.from(JSON.stringify(body), 'utf8'),
  };
}

function binary(attributes: Record<string, string>): HttpRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': randomUUID() };
  for (const [name, value] of Object.entries(attributes)) headers[`ce-${name}`] = value;
  return { ...request({}), headers, body: Buffer.from('{"leerling":1}') };
}

const json = (response: HttpResponse) => JSON.parse(response.body) as Record<string, unknown>;

describe('ORD-1: withoutKey refuse at the ingest (issue 33)', () => {
  it('ORD-1: a keyless event the subscription would receive is 400 ordering-key-missing naming the attribute and the subscription; nothing queued, counted', async () => {
    const response = await acceptEvents(request(event()), PUBLISHER, deps);
    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({
      type: problemTypeUri('ordering-key-missing'),
      title: 'Ordering key missing',
      detail: expect.stringContaining('sub-ordered'),
    });
    expect(json(response)['errors']).toEqual([
      {
        attribute: 'partitionkey',
        rule: 'ordering-key-required',
        requirement: 'ORD-1',
        message: expect.stringMatching(/`partitionkey`.*sub-ordered/),
      },
    ]);
    expect(queue.messages).toHaveLength(0);
    expect(rejected).toEqual(['ordering-key-missing']);
  });

  it('ORD-1: the same event with its key is accepted; an empty key counts as none (the router reads it so)', async () => {
    expect((await acceptEvents(request(event({ partitionkey: 'leerling-42' })), PUBLISHER, deps)).status).toBe(202);
    expect(queue.messages).toHaveLength(1);
    expect((await acceptEvents(request(event({ partitionkey: '' })), PUBLISHER, deps)).status).toBe(400);
  });

  it('ORD-1: the idempotency guard stores the refusal, never an acceptance: a retry with the same key gets the 400 again and stores nothing', async () => {
    const key = randomUUID();
    const body = event();
    const first = await acceptEvents(request(body, { key }), PUBLISHER, deps);
    const again = await acceptEvents(request(body, { key }), PUBLISHER, deps);
    expect([first.status, again.status]).toEqual([400, 400]);
    expect(json(again)['type']).toBe(problemTypeUri('ordering-key-missing'));
    expect(queue.messages).toHaveLength(0);
  });

  it("ORD-1: a keyless event the subscription's filter does not match is accepted, and so is one for an unordered or non-refusing subscription", async () => {
    expect(
      (await acceptEvents(request(event({ type: 'nl.edu.leerling.uitgeschreven' })), PUBLISHER, deps)).status,
    ).toBe(202);
    source.list = [ordered({ ordering: { key: 'partitionkey', withoutKey: 'unordered', onFailure: 'block' } })];
    now += TTL_MS;
    expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
    expect(queue.messages).toHaveLength(2);
  });

  it('ORD-1, EDU-7: a subscription whose owner is not entitled to the event would not receive it, so it refuses nothing', async () => {
    entitlements = new Map([['school-b', [{ typePrefix: 'nl.edu.rooster' }]]]);
    expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
  });

  it('ORD-1: the key a subscription names is the one asked for: `subject`, or an extension', async () => {
    source.list = [
      ordered({ subscriptionId: 'by-subject', ordering: { key: 'subject', withoutKey: 'refuse', onFailure: 'park' } }),
      ordered({ subscriptionId: 'by-dossier', ordering: { key: 'dossier', withoutKey: 'refuse', onFailure: 'skip' } }),
    ];
    const both = await acceptEvents(request(event({ subject: 'leerling/42', dossier: 'd-7' })), PUBLISHER, deps);
    expect(both.status).toBe(202);
    const response = await acceptEvents(request(event({ subject: 'leerling/42' })), PUBLISHER, deps);
    expect(json(response)['errors']).toEqual([
      expect.objectContaining({ attribute: 'dossier', message: expect.stringContaining('by-dossier') }),
    ]);
  });

  it('ORD-1: a batch is refused whole; each keyless member the subscription would receive is named by index', async () => {
    const members = [event({ partitionkey: 'a' }), event(), event({ type: 'nl.edu.leerling.uitgeschreven' }), event()];
    const response = await acceptEvents(request(members, { batch: true }), PUBLISHER, deps);
    expect(response.status).toBe(400);
    expect((json(response)['errors'] as { index: number }[]).map((issue) => issue.index)).toEqual([1, 3]);
    expect(json(response)['detail']).toContain('2 events');
    expect(queue.messages).toHaveLength(0);
  });

  it('ORD-1: binary mode reads the key from its ce- header like any attribute', async () => {
    const attributes = { specversion: '1.0', id: randomUUID(), source: `${SOURCE}:x`, type: TYPE };
    expect((await acceptEvents(binary(attributes), PUBLISHER, deps)).status).toBe(400);
    expect((await acceptEvents(binary({ ...attributes, partitionkey: 'k' }), PUBLISHER, deps)).status).toBe(202);
  });

  it('ORD-1: the list is read once per time to live per container, whatever the requests; a change takes effect after it', async () => {
    for (let i = 0; i < 5; i++) await acceptEvents(request(event({ partitionkey: `k${i}` })), PUBLISHER, deps);
    expect(source.reads).toBe(1);
    source.list = [];
    now += TTL_MS - 1;
    expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(400);
    now += 1;
    expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
    expect(source.reads).toBe(2);
  });

  it('ORD-1: with no subscription refusing keyless events the check costs the cached read only: no entitlement read, no matching', async () => {
    source.list = [];
    for (let i = 0; i < 3; i++) expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
    expect(source.reads).toBe(1);
    expect(entitlementReads).toBe(0);
  });

  it('ORD-1: events that carry every key asked for are not matched and read no entitlements', async () => {
    await acceptEvents(request(event({ partitionkey: 'k' })), PUBLISHER, deps);
    expect(entitlementReads).toBe(0);
  });

  it('ORD-1: a list that cannot be read is 503 unavailable with Retry-After, nothing stored, and the key is free for the retry', async () => {
    source.failing = true;
    const key = randomUUID();
    const body = event({ partitionkey: 'k' });
    const refused = await acceptEvents(request(body, { key }), PUBLISHER, deps);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(queue.messages).toHaveLength(0);
    source.failing = false;
    expect((await acceptEvents(request(body, { key }), PUBLISHER, deps)).status).toBe(202);
    expect(queue.messages).toHaveLength(1);
  });
});

describe('ORD-1 on the ZGW path (issue 33, issue 34)', () => {
  it('ORD-1: a notificatie whose CloudEvent lacks the key is refused with the ZGW Fout naming the attribute, not answered as accepted; nothing queued', async () => {
    const refusal = await ingestCloudEvent(event(), randomUUID(), 'partner-a', deps, 'correlation').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(KoerierError);
    const { problem } = refusal as KoerierError;
    expect(problem).toMatchObject({ status: 400, code: 'ordering-key-missing' });
    expect(problem['invalidParams']).toEqual([
      expect.objectContaining({ name: 'partitionkey', code: 'ordering-key-required' }),
    ]);
    expect(queue.messages).toHaveLength(0);
    await ingestCloudEvent(event({ partitionkey: 'zaak-1' }), randomUUID(), 'partner-a', deps, 'correlation');
    expect(queue.messages).toHaveLength(1);
  });
});
