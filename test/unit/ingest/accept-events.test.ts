/**
 * The ingest use case (functions/core/ingest) without emulators: the in-memory idempotency store,
 * rate window and inbound queue, typed against their ports, and a clock the test sets. The
 * integration tests (test/integration/ingest-*.test.ts) prove the same rules through the Lambda
 * handler against the emulators.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import {
  acceptEvents,
  inboundMessageAttributes,
  MAX_EVENTS_PER_BATCH,
  type IngestDependencies,
  type IngestSettings,
} from '../../../functions/core/ingest/index.js';
import { InMemoryClaimCheckStore } from '../../support/memory/claim-check-memory-adapters.js';
import { InMemoryIdempotencyStore } from '../../support/memory/memory-idempotency-store.js';
import type { InMemoryInboundQueue } from '../../support/memory/ingest-memory-adapters.js';
import { cloudEvent, ingestSettings, memoryIngest } from './ingest-fixtures.js';
import { recordingLog, type LoggedLine } from '../../support/recording-log.js';
import { routedEventKey } from '../../../functions/core/routing/routed-events.js';

const PUBLISHER: Principal = { clientId: 'partner-a', scopes: new Set(['events:publish']) };
const OTHER: Principal = { clientId: 'partner-b', scopes: new Set(['events:publish']) };
const SOURCE_A = 'urn:nld:oin:00000001823288444000:systeem';
const START = Date.UTC(2026, 2, 1, 12, 0, 10);

const settings: IngestSettings = ingestSettings({
  'partner-a': ['urn:nld:oin:00000001823288444000:', '/'],
  'partner-b': ['urn:nld:oin:00000002222222222000:'],
});

let now: number;
let queue: InMemoryInboundQueue;
let logLines: LoggedLine[];
let deps: IngestDependencies;

beforeEach(() => {
  now = START;
  const log = recordingLog();
  logLines = log.lines;
  ({ deps, queue } = memoryIngest(settings, () => now, { log }));
});

const event = (overrides: Record<string, unknown> = {}) => cloudEvent(`${SOURCE_A}:x`, overrides);

function request(
  body: unknown,
  headers: Record<string, string> = {},
  contentType = 'application/cloudevents+json',
): HttpRequest {
  return {
    method: 'POST',
    path: '/events',
    headers: { 'content-type': contentType, 'idempotency-key': randomUUID(), ...headers },
    query: {},
    routeKey: 'POST /events',
    pathParameters: {},
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8'),
  };
}

const json = (response: HttpResponse) => JSON.parse(response.body) as Record<string, unknown>;

describe('acceptEvents: persist before acknowledge', () => {
  it('EDU-19, EDU-1: an event above the inline threshold is queued by reference once its data is stored; a failing object store is a 503 and queues nothing', async () => {
    const store = new InMemoryClaimCheckStore();
    const withClaimCheck: IngestDependencies = {
      ...deps,
      settings: { ...settings, maxEventBytes: 1024 * 1024 },
      claimCheck: { ...deps.claimCheck, store },
    };
    const large = () => event({ datacontenttype: 'text/plain', data: 'x'.repeat(100_000) });
    expect((await acceptEvents(request(large()), PUBLISHER, withClaimCheck)).status).toBe(202);
    expect(JSON.parse(queue.messages[0]!.body)).toMatchObject({
      dataref: expect.stringMatching(/^https:\/\/koerier\.example\/payloads\//),
      koerierdatasize: 100_000,
    });
    expect(store.objects.size).toBe(1);
    store.put = () => Promise.reject(new Error('S3 unavailable'));
    const refused = await acceptEvents(request(large()), PUBLISHER, withClaimCheck);
    expect(refused.status).toBe(503);
    expect(queue.messages).toHaveLength(1);
  });

  it('EDU-19, EDU-IN: the 202 lists the events only once the queue holds them, with the publisher, receipt time, correlation id and Idempotency-Key as attributes', async () => {
    const accepted = event();
    const key = randomUUID();
    const response = await acceptEvents(
      request(accepted, { 'x-correlation-id': 'order-42', 'idempotency-key': key }),
      PUBLISHER,
      deps,
    );
    expect(response.status).toBe(202);
    expect(json(response)).toEqual({ acceptedCount: 1, accepted: [{ source: accepted.source, id: accepted.id }] });
    expect(queue.messages).toEqual([
      {
        body: JSON.stringify(accepted),
        attributes: {
          [inboundMessageAttributes.publisher]: 'partner-a',
          [inboundMessageAttributes.receivedAt]: new Date(START).toISOString(),
          [inboundMessageAttributes.correlationId]: 'order-42',
          // Issue 30 item 1: the router keeps it on the event's marker, for the trace.
          [inboundMessageAttributes.idempotencyKey]: key,
          // Issue 33: its place in acceptance order, what ordered lanes number by (epoch ms × 1,000 and a count).
          [inboundMessageAttributes.acceptedPosition]: expect.stringMatching(/^[1-9]\d{15}$/),
        },
      },
    ]);
  });

  it('SELF-1, issue 30 item 1: events accepted before are marked duplicate from one read per request, and still queued (the router drops them); a failed read marks none', async () => {
    const [seen, fresh] = [event(), event()];
    const reads: number[] = [];
    const withEarlier: IngestDependencies = {
      ...deps,
      acceptedEvents: {
        acceptedAmong: async (events) => {
          reads.push(events.length);
          return new Set([routedEventKey(seen)]);
        },
      },
    };
    const batch = (events: unknown[]) => request(events, {}, 'application/cloudevents-batch+json');
    const answer = await acceptEvents(batch([seen, fresh]), PUBLISHER, withEarlier);
    expect(json(answer)).toEqual({
      acceptedCount: 2,
      accepted: [
        { source: seen.source, id: seen.id, duplicate: true },
        { source: fresh.source, id: fresh.id },
      ],
      duplicateCount: 1,
    });
    expect(reads).toEqual([2]);
    expect(queue.messages).toHaveLength(2);
    const failing: IngestDependencies = {
      ...deps,
      acceptedEvents: { acceptedAmong: () => Promise.reject(new Error('DynamoDB throttled')) },
    };
    const unmarked = await acceptEvents(batch([seen]), PUBLISHER, failing);
    expect(unmarked.status).toBe(202);
    expect(json(unmarked)).toEqual({ acceptedCount: 1, accepted: [{ source: seen.source, id: seen.id }] });
  });

  it('EDU-19, review #2: a failed write is a 503 with Retry-After, acknowledges nothing, and frees the key so the retry is processed', async () => {
    queue.failWith = new Error('SQS is down');
    const first = request(event());
    const refused = await acceptEvents(first, PUBLISHER, deps);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(json(refused)).toMatchObject({
      type: expect.stringContaining('events-not-stored'),
      title: 'Events not stored',
    });
    expect(refused.body).not.toContain('SQS is down');
    expect(logLines).toContainEqual(expect.objectContaining({ level: 'error', message: 'events not stored' }));

    queue.failWith = undefined;
    const retried = await acceptEvents(first, PUBLISHER, deps);
    expect(retried.status).toBe(202);
    expect(queue.messages).toHaveLength(1);
  });

  it('EDU-19: when the idempotency store cannot record the completion, the stored events still get their 202 and the operator a warning', async () => {
    class UnconfirmedStore extends InMemoryIdempotencyStore {
      override async confirm(): Promise<void> {
        throw new Error('DynamoDB throttled');
      }
    }
    const response = await acceptEvents(request(event()), PUBLISHER, { ...deps, idempotency: new UnconfirmedStore() });
    expect(response.status).toBe(202);
    expect(queue.messages).toHaveLength(1);
    // Only a later replay of the 202 is lost: worth a warning that names the client, not a failed request.
    expect(logLines).toContainEqual(
      expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ client: 'partner-a' }) }),
    );
  });
});

describe('acceptEvents: the Idempotency-Key guard', () => {
  it('EDU-IDEM-18: without a key the answer is 400 before anything else: no rate slot, nothing stored', async () => {
    const response = await acceptEvents(request(event(), { 'idempotency-key': '' }), PUBLISHER, deps);
    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({ type: expect.stringContaining('idempotency-key-missing') });
    expect(queue.messages).toHaveLength(0);
    for (let n = 0; n < settings.publishRatePerMinute; n++)
      expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
  });

  it('EDU-IDEM-14: a repeat gets the byte-identical answer, marked Idempotent-Replayed, stores no second event and takes no rate slot', async () => {
    const first = request(event());
    const original = await acceptEvents(first, PUBLISHER, deps);
    for (let n = 0; n < 5; n++) {
      const replay = await acceptEvents(first, PUBLISHER, deps);
      expect(replay.status).toBe(202);
      expect(replay.body).toBe(original.body);
      expect(replay.headers['idempotent-replayed']).toBe('true');
    }
    expect(queue.messages).toHaveLength(1);
    // The replays took no slot of the publisher's window: the rest of its rate is still there.
    for (let n = 1; n < settings.publishRatePerMinute; n++)
      expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
  });

  it('EDU-IDEM-8: the same key with another body gets 422 naming the key, and nothing is stored', async () => {
    const key = randomUUID();
    expect((await acceptEvents(request(event(), { 'idempotency-key': key }), PUBLISHER, deps)).status).toBe(202);
    const reused = await acceptEvents(request(event(), { 'idempotency-key': key }), PUBLISHER, deps);
    expect(reused.status).toBe(422);
    expect(reused.body).toContain(key);
    expect(queue.messages).toHaveLength(1);
  });
});

describe('acceptEvents: the publisher’s rate window', () => {
  it('WH-7, EDU-20: past the rate a publisher gets 429 with Retry-After to the end of the window; other publishers are unaffected', async () => {
    for (let n = 0; n < settings.publishRatePerMinute; n++)
      expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
    const refused = await acceptEvents(request(event()), PUBLISHER, deps);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('50');
    const otherSource = 'urn:nld:oin:00000002222222222000:systeem';
    expect((await acceptEvents(request(event({ source: otherSource })), OTHER, deps)).status).toBe(202);
    expect(queue.messages).toHaveLength(settings.publishRatePerMinute + 1);
  });

  it('WH-7, EDU-20: the window is one clock minute: at the next minute the publisher is accepted again', async () => {
    for (let n = 0; n < settings.publishRatePerMinute; n++) await acceptEvents(request(event()), PUBLISHER, deps);
    expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(429);
    now = START + 50_000;
    expect((await acceptEvents(request(event()), PUBLISHER, deps)).status).toBe(202);
  });

  it('WH-7: a 429 frees the key, so the retry with the same key is processed once the window allows', async () => {
    for (let n = 0; n < settings.publishRatePerMinute; n++) await acceptEvents(request(event()), PUBLISHER, deps);
    const limited = request(event());
    expect((await acceptEvents(limited, PUBLISHER, deps)).status).toBe(429);
    now = START + 60_000;
    const retried = await acceptEvents(limited, PUBLISHER, deps);
    expect(retried.status).toBe(202);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('acceptEvents: validation, batch cap and source grants', () => {
  it('HTTP-3: a batch of more than MAX_EVENTS_PER_BATCH events gets 413 and stores nothing', async () => {
    const events = Array.from({ length: MAX_EVENTS_PER_BATCH + 1 }, () => event());
    const response = await acceptEvents(request(events, {}, 'application/cloudevents-batch+json'), PUBLISHER, deps);
    expect(response.status).toBe(413);
    expect(queue.messages).toHaveLength(0);
  });

  it('EDU-16: a batch of exactly MAX_EVENTS_PER_BATCH events is stored whole and every pair is listed', async () => {
    const events = Array.from({ length: MAX_EVENTS_PER_BATCH }, () => event());
    const response = await acceptEvents(request(events, {}, 'application/cloudevents-batch+json'), PUBLISHER, deps);
    expect(response.status).toBe(202);
    expect((json(response)['accepted'] as unknown[]).length).toBe(MAX_EVENTS_PER_BATCH);
    expect(queue.messages).toHaveLength(MAX_EVENTS_PER_BATCH);
  });

  it('EDU-IN: a batch with one member under a source the publisher is not granted gets 403 naming the member, and nothing is stored', async () => {
    const response = await acceptEvents(
      request(
        [event(), event({ source: 'urn:nld:oin:00000002222222222000:systeem' })],
        {},
        'application/cloudevents-batch+json',
      ),
      PUBLISHER,
      deps,
    );
    expect(response.status).toBe(403);
    expect(json(response)['errors']).toEqual([expect.objectContaining({ index: 1, requirement: 'EDU-IN' })]);
    expect(queue.messages).toHaveLength(0);
  });

  it('EDU-IN: a publisher without grants may publish nothing', async () => {
    const response = await acceptEvents(
      request(event()),
      { clientId: 'partner-z', scopes: new Set(['events:publish']) },
      deps,
    );
    expect(response.status).toBe(403);
    expect(queue.messages).toHaveLength(0);
  });

  it('HTTP-3: an invalid member fails the whole batch with 400, and nothing is stored', async () => {
    const response = await acceptEvents(
      request([event(), event({ id: '' })], {}, 'application/cloudevents-batch+json'),
      PUBLISHER,
      deps,
    );
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(queue.messages).toHaveLength(0);
  });
});

describe('acceptEvents: the answer', () => {
  it('CE-4: a SHOULD-level finding is accepted and reported back as a warning', async () => {
    const response = await acceptEvents(request(event({ source: '/not/a/urn' })), PUBLISHER, deps);
    expect(response.status).toBe(202);
    expect(json(response)['warnings']).toContainEqual(expect.objectContaining({ requirement: 'CE-4' }));
  });

  it('CE-4, review #11: the same warning for many batch members comes back once, with their indexes and a count', async () => {
    const events = Array.from({ length: 5 }, () => event({ source: '/not/a/urn' }));
    const response = await acceptEvents(request(events, {}, 'application/cloudevents-batch+json'), PUBLISHER, deps);
    const warnings = (
      json(response)['warnings'] as { requirement: string; indexes?: number[]; message: string }[]
    ).filter((w) => w.requirement === 'CE-4');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.indexes).toEqual([0, 1, 2, 3, 4]);
    expect(warnings[0]!.message).toContain('(and 4 more like it)');
  });

  it('CE-16: the event data never reaches a log line; context attributes may', async () => {
    const secret = `bsn-${randomUUID()}`;
    const accepted = event({ data: { bsn: secret } });
    await acceptEvents(request(accepted), PUBLISHER, deps);
    await acceptEvents(request(event({ id: '', data: { bsn: secret } })), PUBLISHER, deps);
    const logged = JSON.stringify(logLines);
    expect(logged).toContain(accepted.id);
    expect(logged).not.toContain(secret);
  });

  it('issue 13 item 4: every log line of a publish request, accepted or refused, names its correlation id', async () => {
    await acceptEvents(request(event(), { 'x-correlation-id': 'order-7' }), PUBLISHER, deps);
    await acceptEvents(request(event({ id: '' }), { 'x-correlation-id': 'order-8' }), PUBLISHER, deps);
    // Operators find a request's lines, and the router's and deliveries' after them, by this field (docs/OPERATIONS.md).
    expect(logLines.map((line) => line.fields['correlationId'])).toEqual(['order-7', 'order-8']);
  });
});
