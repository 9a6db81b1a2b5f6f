/**
 * The ingest handler against the emulators: what a partner's POST /events leaves in SQS, what it
 * answers, and what it logs.
 */
import { createHash, randomUUID } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceEnv } from '../../functions/config/resources.js';
import { logger } from '../../functions/app/logger.js';
import { startHandlerHarness, type HandlerHarness } from '../support/handler-harness.js';

let harness: HandlerHarness;
let handler: (event: never, context: never) => Promise<unknown>;
let publisherToken: string;

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';

function event(overrides: Record<string, unknown> = {}) {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: SOURCE,
    type: 'nl.edu.leerling.ingeschreven',
    time: '2026-11-22T09:00:00Z',
    datacontenttype: 'application/json',
    data: { leerling: 'L-42' },
    ...overrides,
  };
}

function sha256(bytes: Buffer): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}

function post(body: string | Buffer, headers: Record<string, string>, token = publisherToken) {
  return harness.invoke(handler, {
    method: 'POST',
    path: '/events',
    routeKey: 'POST /events',
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), ...headers },
    body,
  });
}

beforeAll(async () => {
  harness = await startHandlerHarness();
  ({ handler } = (await import('../../functions/handlers/ingest.js')) as { handler: typeof handler });
  publisherToken = await harness.token('partner-a', 'events:publish');
});

afterAll(async () => {
  await harness?.stop();
});

describe('POST /events, against SQS and DynamoDB emulators', () => {
  it('EDU-19, HTTP-1: a structured event is stored in the inbound queue byte for byte before the 202', async () => {
    const body = JSON.stringify(event({ comexampleextension: 'kept' }), null, 1);
    const response = await post(body, { 'content-type': 'application/cloudevents+json; charset=utf-8' });
    expect(response.status).toBe(202);
    const messages = await harness.drain('inbound');
    expect(messages).toHaveLength(1);
    expect(messages[0]!.Body).toBe(body);
    expect(messages[0]!.MessageAttributes?.['koerier-publisher']?.StringValue).toBe('partner-a');
    const parsed = JSON.parse(body) as { id: string; source: string };
    expect(response.json()).toEqual({ acceptedCount: 1, accepted: [{ source: parsed.source, id: parsed.id }] });
  });

  it('EDU-16, HTTP-3: a batch of 23 events is stored whole (batched writes) and every pair is listed', async () => {
    const events = Array.from({ length: 23 }, () => event());
    const response = await post(JSON.stringify(events), { 'content-type': 'application/cloudevents-batch+json' });
    expect(response.status).toBe(202);
    const stored = (await harness.drain('inbound')).map((m) => (JSON.parse(m.Body!) as { id: string }).id).sort();
    expect(stored).toEqual(events.map((e) => e.id).sort());
    expect((response.json() as { accepted: unknown[] }).accepted).toHaveLength(23);
  });

  it('HTTP-3: a batch of more than 1000 events gets 413 and stores nothing', async () => {
    const events = Array.from({ length: 1001 }, () => event({ data: undefined, datacontenttype: undefined }));
    const response = await post(JSON.stringify(events), { 'content-type': 'application/cloudevents-batch+json' });
    expect(response.status).toBe(413);
    expect(await harness.drain('inbound')).toHaveLength(0);
  });

  it('HTTP-3: a batch with one invalid member stores nothing and names the member', async () => {
    const events = [event(), event({ id: '' }), event()];
    const response = await post(JSON.stringify(events), { 'content-type': 'application/cloudevents-batch+json' });
    expect(response.status).toBe(400);
    const problem = response.json() as { errors: { index: number; attribute: string; requirement: string }[] };
    expect(problem.errors).toContainEqual(expect.objectContaining({ index: 1, attribute: 'id', requirement: 'CE-3' }));
    expect(await harness.drain('inbound')).toHaveLength(0);
  });

  it('HTTP-2: a binary event is stored in the JSON format with its ce- attributes and data', async () => {
    const id = randomUUID();
    const response = await post('{"leerling":"L-43"}', {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': id,
      'ce-source': SOURCE,
      'ce-type': 'nl.edu.leerling.uitgeschreven',
      'ce-comexampleextension': 'with%20space',
    });
    expect(response.status).toBe(202);
    const [message] = await harness.drain('inbound');
    expect(JSON.parse(message!.Body!)).toEqual({
      specversion: '1.0',
      id,
      source: SOURCE,
      type: 'nl.edu.leerling.uitgeschreven',
      comexampleextension: 'with space',
      datacontenttype: 'application/json',
      data: { leerling: 'L-43' },
    });
  });

  it('CE-4: a SHOULD-level finding is accepted and reported back as a warning', async () => {
    const response = await post(JSON.stringify(event({ source: '/not/a/urn' })), {
      'content-type': 'application/cloudevents+json',
    });
    expect(response.status).toBe(202);
    expect((response.json() as { warnings: { requirement: string }[] }).warnings).toContainEqual(
      expect.objectContaining({ requirement: 'CE-4' }),
    );
    expect(await harness.drain('inbound')).toHaveLength(1);
  });

  it('EDU-1, CE-15: a 300 KB event is accepted; the queued message carries dataref, digest and size instead of the data', async () => {
    const data = 'x'.repeat(300 * 1024);
    const response = await post(JSON.stringify(event({ datacontenttype: 'text/plain', data })), {
      'content-type': 'application/cloudevents+json',
    });
    expect(response.status).toBe(202);
    const [message] = await harness.drain('inbound');
    const queued = JSON.parse(message!.Body!) as Record<string, unknown>;
    expect(queued['data']).toBeUndefined();
    expect(queued['dataref']).toMatch(/\/payloads\/[A-Za-z0-9_-]{43}$/);
    expect(queued).toMatchObject({
      datacontenttype: 'text/plain',
      koerierdatasize: data.length,
      koerierdatadigest: sha256(Buffer.from(data)),
    });
  });

  it('EDU-1, HTTP-2: a 1 MB binary-mode body goes to the claim check byte for byte; the queued event keeps its ce- attributes and Content-Type', async () => {
    const bytes = Buffer.alloc(1_000_000, 0xab);
    const response = await post(bytes, {
      'content-type': 'application/pdf',
      'ce-specversion': '1.0',
      'ce-id': randomUUID(),
      'ce-source': SOURCE,
      'ce-type': 'nl.edu.leerling.rapport',
      'ce-comexample': 'kept',
    });
    expect(response.status).toBe(202);
    const [message] = await harness.drain('inbound');
    const queued = JSON.parse(message!.Body!) as Record<string, unknown>;
    expect(queued).toMatchObject({
      datacontenttype: 'application/pdf',
      comexample: 'kept',
      koerierdatasize: bytes.length,
      koerierdatadigest: sha256(bytes),
    });
    expect(queued['data_base64']).toBeUndefined();
    const key = `payloads/${(queued['dataref'] as string).split('/').at(-1)}`;
    const object = await new S3Client({}).send(
      new GetObjectCommand({ Bucket: process.env[resourceEnv.bucket('payloads')], Key: key }),
    );
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(bytes)).toBe(true);
    expect(object.ContentType).toBe('application/pdf');
  });

  it('EDU-1, CE-14, CE-11: at the edges (64 KiB, one byte over, a producer dataref event at the queue limit, 4 MiB) every queued message stays within SQS’s 256 KiB', async () => {
    const sized = (size: number, overrides: Record<string, unknown> = {}) => {
      const head = event({ datacontenttype: 'text/plain', data: '', ...overrides });
      const json = JSON.stringify({ ...head, data: 'y'.repeat(size - Buffer.byteLength(JSON.stringify(head))) });
      expect(Buffer.byteLength(json)).toBe(size);
      return json;
    };
    const maxQueued = 256 * 1024 - 8 * 1024;
    const bodies = [
      sized(65_536),
      sized(65_537),
      sized(maxQueued, { dataref: 'https://school.example/f/1' }),
      sized(4 * 1024 * 1024),
    ];
    for (const body of bodies)
      expect((await post(body, { 'content-type': 'application/cloudevents+json' })).status).toBe(202);
    const messages = await harness.drain('inbound');
    expect(messages).toHaveLength(4);
    const byId = new Map(messages.map((m) => [(JSON.parse(m.Body!) as { id: string }).id, m]));
    for (const body of bodies) {
      const message = byId.get((JSON.parse(body) as { id: string }).id)!;
      const attributes = Object.entries(message.MessageAttributes ?? {}).reduce(
        (sum, [name, value]) => sum + name.length + (value.StringValue?.length ?? 0) + 6,
        0,
      );
      expect(Buffer.byteLength(message.Body!) + attributes).toBeLessThanOrEqual(256 * 1024);
    }
    // Inline up to the threshold, by reference one byte over; a producer's dataref untouched.
    expect(byId.get((JSON.parse(bodies[0]!) as { id: string }).id)!.Body).toBe(bodies[0]);
    expect(byId.get((JSON.parse(bodies[1]!) as { id: string }).id)!.Body).not.toContain('"data"');
    expect(byId.get((JSON.parse(bodies[2]!) as { id: string }).id)!.Body).toBe(bodies[2]);
    // One byte more with the producer's own dataref cannot be queued: 413 naming the upload route.
    const over = await post(sized(maxQueued + 1, { dataref: 'https://school.example/f/1' }), {
      'content-type': 'application/cloudevents+json',
    });
    expect(over.status).toBe(413);
    expect((over.json() as { detail: string }).detail).toContain('POST /payloads');
    expect(await harness.drain('inbound')).toHaveLength(0);
  });

  it('CE-16: the event data never reaches a log line; context attributes may', async () => {
    const lines: string[] = [];
    const restore = logger.captureTo((line) => lines.push(line));
    try {
      const secret = `bsn-${randomUUID()}`;
      const accepted = event({ data: { bsn: secret } });
      expect((await post(JSON.stringify(accepted), { 'content-type': 'application/cloudevents+json' })).status).toBe(
        202,
      );
      expect(
        (
          await post(JSON.stringify(event({ id: '', data: { bsn: secret } })), {
            'content-type': 'application/cloudevents+json',
          })
        ).status,
      ).toBe(400);
      expect(lines.some((l) => l.includes(accepted.id))).toBe(true);
      expect(lines.join('\n')).not.toContain(secret);
    } finally {
      restore();
      await harness.drain('inbound');
    }
  });

  it('EDU-IN: a publisher may only publish under the sources it is granted; otherwise 403 and nothing is stored', async () => {
    const partnerC = await harness.token('partner-c', 'events:publish');
    const own = event({ source: 'urn:nld:oin:00000009999999999000:systeem:x' });
    expect((await post(JSON.stringify(own), { 'content-type': 'application/cloudevents+json' }, partnerC)).status).toBe(
      202,
    );
    const forged = await post(
      JSON.stringify([own, event()]),
      { 'content-type': 'application/cloudevents-batch+json' },
      partnerC,
    );
    expect(forged.status).toBe(403);
    expect((forged.json() as { errors: { index: number; requirement: string }[] }).errors).toEqual([
      expect.objectContaining({ index: 1, requirement: 'EDU-IN' }),
    ]);
    const unknown = await post(
      JSON.stringify(event()),
      { 'content-type': 'application/cloudevents+json' },
      await harness.token('partner-z', 'events:publish'),
    );
    expect(unknown.status).toBe(403);
    expect(await harness.drain('inbound')).toHaveLength(1);
  });

  it('CE-4: the same warning for many batch members comes back once, with their indexes', async () => {
    const events = Array.from({ length: 5 }, () => event({ source: '/not/a/urn' }));
    const response = await post(JSON.stringify(events), { 'content-type': 'application/cloudevents-batch+json' });
    expect(response.status).toBe(202);
    const warnings = (response.json() as { warnings: { requirement: string; indexes?: number[] }[] }).warnings.filter(
      (w) => w.requirement === 'CE-4',
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.indexes).toEqual([0, 1, 2, 3, 4]);
    await harness.drain('inbound');
  });

  it('CE-2: data holding U+FFFE, which SQS refuses raw, is stored as the same JSON value', async () => {
    const accepted = event({ data: { naam: 'a\uFFFEb\uFFFFc' } });
    expect((await post(JSON.stringify(accepted), { 'content-type': 'application/cloudevents+json' })).status).toBe(202);
    const [message] = await harness.drain('inbound');
    expect(message!.Body).not.toMatch(/[\uFFFE\uFFFF]/);
    expect((JSON.parse(message!.Body!) as { data: unknown }).data).toEqual(accepted.data);
  });

  it('EDU-4: without events:publish the ingest answers 403 and stores nothing', async () => {
    const response = await post(
      JSON.stringify(event()),
      { 'content-type': 'application/cloudevents+json' },
      await harness.token('partner-a', 'events:consume'),
    );
    expect(response.status).toBe(403);
    expect(await harness.drain('inbound')).toHaveLength(0);
  });

  it('HTTP-1: an unknown CloudEvents format gets 415', async () => {
    const response = await post('<event/>', { 'content-type': 'application/cloudevents+xml' });
    expect(response.status).toBe(415);
  });

  it('WH-7: a validation request from an allowed origin gets consent and the allowed rate', async () => {
    const response = await harness.invoke(handler, {
      method: 'OPTIONS',
      path: '/events',
      routeKey: 'OPTIONS /events',
      headers: { 'webhook-request-origin': 'partner.example' },
    });
    expect(response.status).toBe(200);
    expect(response.headers['webhook-allowed-origin']).toBe('partner.example');
    expect(Number(response.headers['webhook-allowed-rate'])).toBeGreaterThan(0);
  });

  it('WH-7: a validation request from an unknown origin is refused without consent headers', async () => {
    const response = await harness.invoke(handler, {
      method: 'OPTIONS',
      path: '/events',
      routeKey: 'OPTIONS /events',
      headers: { 'webhook-request-origin': 'stranger.example' },
    });
    expect(response.status).toBe(403);
    expect(response.headers['webhook-allowed-origin']).toBeUndefined();
  });
});

describe('Idempotency-Key on the ingest (EDU-IDEM), against DynamoDB and SQS emulators', () => {
  const structured = { 'content-type': 'application/cloudevents+json' };

  it('EDU-IDEM-18: a missing key gets 400 and nothing is stored', async () => {
    const response = await harness.invoke(handler, {
      method: 'POST',
      path: '/events',
      routeKey: 'POST /events',
      headers: { authorization: `Bearer ${publisherToken}`, ...structured },
      body: JSON.stringify(event()),
    });
    expect(response.status).toBe(400);
    expect(await harness.drain('inbound')).toHaveLength(0);
  });

  it('EDU-IDEM-14: a repeat gets the byte-identical answer, marked Idempotent-Replayed, and no second event', async () => {
    const key = randomUUID();
    const body = JSON.stringify(event());
    const first = await post(body, { ...structured, 'idempotency-key': key });
    const second = await post(body, { ...structured, 'idempotency-key': key.toUpperCase() });
    expect(first.status).toBe(202);
    expect(second.status).toBe(first.status);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await harness.drain('inbound')).toHaveLength(1);
  });

  it('EDU-IDEM-8: the same key with another body gets 422 naming the key', async () => {
    const key = randomUUID();
    expect((await post(JSON.stringify(event()), { ...structured, 'idempotency-key': key })).status).toBe(202);
    const reused = await post(JSON.stringify(event()), { ...structured, 'idempotency-key': key });
    expect(reused.status).toBe(422);
    expect(reused.body).toContain(key);
    expect(await harness.drain('inbound')).toHaveLength(1);
  });

  it('EDU-IDEM-16: another client with the same key is processed independently', async () => {
    const key = randomUUID();
    expect((await post(JSON.stringify(event()), { ...structured, 'idempotency-key': key })).status).toBe(202);
    // partner-b publishes under its own organisation; the same key from one client would be a 422 here.
    const ownEvent = JSON.stringify(event({ source: 'urn:nld:oin:00000002222222222000:systeem:lvs' }));
    const other = await post(
      ownEvent,
      { ...structured, 'idempotency-key': key },
      await harness.token('partner-b', 'events:publish'),
    );
    expect(other.status).toBe(202);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(await harness.drain('inbound')).toHaveLength(2);
  });

  it('EDU-IDEM-18: 20 concurrent requests with one key store exactly one event; the others get 409 or the replay', async () => {
    const key = randomUUID();
    const body = JSON.stringify(event());
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => post(body, { ...structured, 'idempotency-key': key })),
    );
    const originals = responses.filter((r) => r.status === 202 && !r.headers['idempotent-replayed']);
    expect(originals).toHaveLength(1);
    for (const response of responses) {
      if (response.status === 202) expect(response.body).toBe(originals[0]!.body);
      else expect(response.status).toBe(409);
    }
    expect(await harness.drain('inbound')).toHaveLength(1);
  });

  it('EDU-IDEM-8: in binary mode a changed ce- header with the same key and body gets 422', async () => {
    const key = randomUUID();
    const headers = {
      'idempotency-key': key,
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': randomUUID(),
      'ce-source': SOURCE,
      'ce-type': 'nl.edu.leerling.ingeschreven',
    };
    expect((await post('{"a":1}', headers)).status).toBe(202);
    expect((await post('{"a":1}', { ...headers, 'ce-type': 'nl.edu.leerling.uitgeschreven' })).status).toBe(422);
    expect(await harness.drain('inbound')).toHaveLength(1);
  });
});
