/**
 * The claim check for pull subscribers on the laptop host (EDU-1, CE-13, issue 11 "push and pull
 * both"): large events published at POST /events (or through the upload route), routed to a pull
 * subscription's queue on the SQS emulator, received over HTTP, and their data fetched at Koerier's
 * data URL with the consumer's own token, checked against the digest and size the event carries.
 * Every received event is parsed with the official CloudEvents SDK.
 */
import { createHash, randomUUID } from 'node:crypto';
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger } from '../../functions/app/logger.js';
import { payloadIdOf } from '../../functions/core/claim-check/payload-reference.js';
import { apiAs, publishEvents, type KoerierClient, type SubscriptionRequest } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { eventually } from '../support/waiting.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:claim-pull';
let koerier: TestHost;
let publisher: KoerierClient;
let consumer: string;

beforeAll(async () => {
  koerier = await startTestHost();
  publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
  consumer = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
});

afterAll(async () => {
  await koerier?.stop();
});

function sha256(bytes: Buffer): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}

/** A pull subscription of the consumer to an event type of its own. */
async function pullSubscription(
  settings: Record<string, unknown> = {},
  type = `nl.example.claimpull.${randomUUID().slice(0, 8)}.v1`,
): Promise<{ id: string; type: string }> {
  const { data, response } = await apiAs(koerier.url, consumer).POST('/subscriptions', {
    body: { delivery: 'pull', types: [type], ...settings } as SubscriptionRequest,
  });
  expect(response.status).toBe(201);
  expect(data!.maxinlinebytes).toBe(settings['maxinlinebytes']);
  return { id: data!.id, type };
}

/** A structured event whose data is `length` characters of text. */
function textEvent(type: string, length: number): { json: string; id: string; data: string } {
  const id = randomUUID();
  const data = 'leerling;klas;\n'.repeat(Math.ceil(length / 15)).slice(0, length);
  return {
    json: JSON.stringify({ specversion: '1.0', id, source: SOURCE, type, datacontenttype: 'text/plain', data }),
    id,
    data,
  };
}

/** Long polls until `count` events are there; every one must parse with the official SDK. */
async function receive(
  id: string,
  count: number,
): Promise<{ text: string; events: Record<string, unknown>[]; perAnswer: number[] }> {
  const events: Record<string, unknown>[] = [];
  const perAnswer: number[] = [];
  let text = '';
  for (let round = 0; round < 10 && events.length < count; round++) {
    const response = await fetch(`${koerier.url}/subscriptions/${id}/events/receive`, {
      method: 'POST',
      headers: { authorization: `Bearer ${consumer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ maxevents: count - events.length, waitseconds: 5 }),
    });
    expect(response.status).toBe(200);
    const answer = await response.text();
    // Within Lambda's 6 MB response, counted as Lambda counts it (the body escaped as a JSON string).
    expect(Buffer.byteLength(JSON.stringify(answer))).toBeLessThan(6 * 1024 * 1024);
    const received = (JSON.parse(answer) as { events: Record<string, unknown>[] }).events;
    for (const event of received) {
      expect(
        HTTP.toEvent({ headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify(event) }),
      ).toMatchObject({ id: event['id'] });
    }
    events.push(...received);
    if (received.length > 0) perAnswer.push(received.length);
    text += answer;
  }
  expect(events).toHaveLength(count);
  return { text, events, perAnswer };
}

async function fetchData(dataref: string, token: string): Promise<Response> {
  return fetch(dataref, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
}

/** The bytes behind `dataref` as `token` gets them, following Koerier's redirect to a presigned URL. */
async function fetchedBytes(dataref: string, token: string): Promise<Buffer> {
  const response = await fetchData(dataref, token);
  if (response.status === 307) return Buffer.from(await (await fetch(response.headers.get('location')!)).arrayBuffer());
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

function expectReference(event: Record<string, unknown>, bytes: Buffer): void {
  expect(event['data']).toBeUndefined();
  expect(event['data_base64']).toBeUndefined();
  expect(event['dataref']).toMatch(new RegExp(`^${koerier.url}/payloads/[A-Za-z0-9_-]{43}$`));
  expect(event['koerierdatasize']).toBe(bytes.length);
  expect(event['koerierdatadigest']).toBe(sha256(bytes));
}

describe.concurrent('claim check for pull subscribers (EDU-1)', () => {
  it('EDU-1, CARD-6: a 1 MB event reaches a pull consumer by reference; receiving makes it a reader, and the data it fetches matches digest and size', async () => {
    const { id, type } = await pullSubscription();
    const event = textEvent(type, 1_000_000);
    await publishEvents(publisher, event.json);
    const dataUrl = `${koerier.url}/payloads/${payloadIdOf(SOURCE, event.id, { digest: sha256(Buffer.from(event.data)), contentType: 'text/plain', form: 'text' })}`;
    // Published and stored, but not yet received: the consumer is no reader yet.
    expect((await fetchData(dataUrl, consumer)).status).toBe(404);
    const { events } = await receive(id, 1);
    const bytes = Buffer.from(event.data);
    expect(events[0]!['id']).toBe(event.id);
    expect(events[0]!['datacontenttype']).toBe('text/plain');
    expectReference(events[0]!, bytes);
    expect(events[0]!['dataref']).toBe(dataUrl);
    const fetched = await fetchedBytes(dataUrl, consumer);
    expect(fetched.length).toBe(events[0]!['koerierdatasize']);
    expect(sha256(fetched)).toBe(events[0]!['koerierdatadigest']);
    expect(fetched.equals(bytes)).toBe(true);
  });

  it('EDU-1, CARD-6: a 5 MB event published through the upload route reaches a pull consumer, which follows the redirect and verifies digest and size', async () => {
    const { id, type } = await pullSubscription();
    const bytes = Buffer.from('leerling;klas;\n'.repeat(400_000).slice(0, 5_000_000));
    const granted = await publisher.POST('/payloads', {
      body: { size: bytes.length, digest: sha256(bytes), contenttype: 'text/csv' },
    });
    expect(granted.response.status).toBe(201);
    const grant = granted.data!;
    const headers = Object.fromEntries(Object.entries(grant.headers).filter(([name]) => name !== 'content-length'));
    expect((await fetch(grant.uploadurl, { method: 'PUT', headers, body: bytes })).status).toBe(200);
    const eventId = randomUUID();
    await publishEvents(
      publisher,
      JSON.stringify({
        specversion: '1.0',
        id: eventId,
        source: SOURCE,
        type,
        datacontenttype: 'text/csv',
        dataref: grant.dataref,
      }),
    );
    const { events } = await receive(id, 1);
    expect(events[0]!['id']).toBe(eventId);
    expectReference(events[0]!, bytes);
    expect((await fetchData(events[0]!['dataref'] as string, consumer)).status).toBe(307);
    const fetched = await fetchedBytes(events[0]!['dataref'] as string, consumer);
    expect(fetched.length).toBe(5_000_000);
    expect(sha256(fetched)).toBe(events[0]!['koerierdatadigest']);
  });

  it('EDU-1, CE-13: a pull subscription with maxinlinebytes 2 MiB gets a 1 MB event with its data inline, byte for byte as published, next to a small event as accepted', async () => {
    const { id, type } = await pullSubscription({ maxinlinebytes: 2 * 1024 * 1024 });
    const large = textEvent(type, 1_000_000);
    const small = JSON.stringify({
      specversion: '1.0',
      id: randomUUID(),
      source: SOURCE,
      type,
      data: { n: 1.5, naam: 'Zoë' },
    });
    await publishEvents(publisher, large.json);
    await publishEvents(publisher, small);
    const { text, events } = await receive(id, 2);
    expect(events.map((event) => event['id']).sort()).toEqual([large.id, JSON.parse(small).id].sort());
    // The answer carries each event's own text: the large one rebuilt exactly, the small one untouched.
    expect(text).toContain(large.json);
    expect(text).toContain(small);
    const inline = events.find((event) => event['id'] === large.id)!;
    expect(inline['data']).toBe(large.data);
    expect(inline['dataref']).toBeUndefined();
    expect(inline['koerierdatadigest']).toBeUndefined();
  });

  it("EDU-1: a client that is not the pull subscription's owner (nor the publisher) gets 404 for the data the owner fetches", async () => {
    const { id, type } = await pullSubscription();
    const event = textEvent(type, 200_000);
    await publishEvents(publisher, event.json);
    const { events } = await receive(id, 1);
    const dataref = events[0]!['dataref'] as string;
    expect((await fetchData(dataref, consumer)).status).toBe(200);
    const stranger = await koerier.host.issueToken('partner-stranger', ['events:consume']);
    const refused = await fetchData(dataref, stranger);
    expect(refused.status).toBe(404);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
  });

  it('EDU-1: events taken inline again still leave every receive answer within 6 MB: two 3.5 MB events come one per answer, both whole', async () => {
    const { id, type } = await pullSubscription({ maxinlinebytes: 6 * 1024 * 1024 });
    const first = textEvent(type, 3_500_000);
    const second = textEvent(type, 3_500_000);
    await publishEvents(publisher, first.json);
    await publishEvents(publisher, second.json);
    const { text, events, perAnswer } = await receive(id, 2);
    expect(perAnswer).toEqual([1, 1]);
    // A standard queue keeps no order: each event matched by its id.
    const published = new Map([first, second].map((event) => [event.id, event.data]));
    expect(events.map((event) => event['data'])).toEqual(events.map((event) => published.get(event['id'] as string)));
    expect(new Set(events.map((event) => event['id']))).toEqual(new Set(published.keys()));
    expect(text).toContain(first.json);
    expect(text).toContain(second.json);
  });
});

describe('claim check: a reused source + id (EDU-IDEM-15)', () => {
  it('EDU-IDEM-15, EDU-1, issue 28: a second event with the same source + id and other data is accepted and dropped as a duplicate; the first keeps its own object and record, passes its digest check inline and is served by its dataref', async () => {
    const inline = await pullSubscription({ maxinlinebytes: 2 * 1024 * 1024 });
    const byReference = await pullSubscription({}, inline.type);
    const first = textEvent(inline.type, 200_000);
    const duplicates: string[] = [];
    const stopWatching = logger.observe((line) => {
      if (line.includes('duplicate event dropped') && line.includes(first.id)) duplicates.push(line);
    });
    try {
      await publishEvents(publisher, first.json);
      // EDU-IDEM-15: the second is accepted like any event (202) and ignored further down the chain.
      const second = { ...(JSON.parse(first.json) as Record<string, unknown>), data: 'y'.repeat(200_000) };
      await publishEvents(publisher, JSON.stringify(second));
      await eventually('the router to drop the second as a duplicate', () => duplicates.length > 0, {
        timeoutMs: 20_000,
      });

      // Taken inline again, the first event passes its digest check: its own data, as published.
      const [again] = (await receive(inline.id, 1)).events;
      expect(again).toMatchObject({ id: first.id, data: first.data });
      expect(again!['dataref']).toBeUndefined();
      // By reference, its dataref serves its own data, matching the digest and size it carries.
      const [referenced] = (await receive(byReference.id, 1)).events;
      expectReference(referenced!, Buffer.from(first.data));
      const fetched = await fetchedBytes(referenced!['dataref'] as string, consumer);
      expect(fetched.toString('utf8')).toBe(first.data);
      expect(sha256(fetched)).toBe(referenced!['koerierdatadigest']);
    } finally {
      stopWatching();
    }
    // Neither subscription receives the duplicate.
    for (const { id } of [inline, byReference]) {
      const response = await fetch(`${koerier.url}/subscriptions/${id}/events/receive`, {
        method: 'POST',
        headers: { authorization: `Bearer ${consumer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ maxevents: 10, waitseconds: 1 }),
      });
      expect(((await response.json()) as { events: unknown[] }).events).toEqual([]);
    }
  });
});
