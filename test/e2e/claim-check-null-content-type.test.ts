/**
 * Issue 36, item 11, on the laptop host: `"datacontenttype": null` is valid in the JSON event
 * format and means the attribute is absent (JSON-1). An event over the claim-check threshold with
 * it must be accepted, delivered and its data fetched like one without the attribute; read as a
 * media type, the null reached the payload ledger, where the DynamoDB adapter failed (503).
 */
import { createHash, randomUUID } from 'node:crypto';
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';

const authority = createLocalCertificateAuthority();
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:claimnull';
let koerier: TestHost;
let publisher: string;
let subscriber: string;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  koerier = await startTestHost(
    { [settingEnv.validationAgreedClients]: 'dev-subscriber' },
    { trustAuthority: authority },
  );
  publisher = await koerier.token('dev-publisher', ['events:publish']);
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
});

async function pushTarget(
  options: { maxinlinebytes?: number; contentmode?: string } = {},
): Promise<{ receiver: HttpsReceiver; type: string }> {
  const receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
  receivers.push(receiver);
  const type = `nl.example.claimnull.${randomUUID().slice(0, 8)}.v1`;
  const response = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
    ...options,
  });
  expect(response.status).toBe(201);
  return { receiver, type };
}

const sha256 = (bytes: Buffer) => `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
/** A 200 KB event whose data is a JSON string, with `"datacontenttype": null`. */
const nullTyped = (type: string) => ({
  specversion: '1.0',
  id: randomUUID(),
  source: SOURCE,
  type,
  datacontenttype: null,
  data: 'x'.repeat(200_000),
});

describe.concurrent('claim check: datacontenttype null (issue 36, item 11)', () => {
  it('EDU-1, JSON-1, issue 36 item 11: a 200 KB event with "datacontenttype": null is accepted (no 503), delivered by reference, and its data fetched as JSON', async () => {
    const { receiver, type } = await pushTarget();
    const published = nullTyped(type);
    const answer = await tryPublish(koerier.url, publisher, published);
    expect(answer.status, answer.text).toBe(202);
    const [request] = await receiver.waitForRequests(1, { timeoutMs: 20_000 });
    expect(Array.isArray(HTTP.toEvent({ headers: request!.headers, body: request!.body }))).toBe(false);
    const event = JSON.parse(request!.body) as Record<string, unknown>;
    expect(event['id']).toBe(published.id);
    expect('datacontenttype' in event).toBe(false);
    expect(event['dataref']).toMatch(new RegExp(`^${koerier.url}/payloads/[A-Za-z0-9_-]{43}$`));
    const fetched = await fetch(event['dataref'] as string, { headers: { authorization: `Bearer ${subscriber}` } });
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('application/json');
    const bytes = Buffer.from(await fetched.arrayBuffer());
    expect(sha256(bytes)).toBe(event['koerierdatadigest']);
    // JSON data: the string with its quotes, as the event carried it.
    expect(JSON.parse(bytes.toString('utf8'))).toBe(published.data);
  });

  it('EDU-1, JSON-1, issue 36 item 11: in a batch, and inline again for a subscription taking 1 MiB, the event comes back as published, the null read as absent', async () => {
    const { receiver, type } = await pushTarget({ maxinlinebytes: 1024 * 1024 });
    const published = nullTyped(type);
    const answer = await tryPublish(koerier.url, publisher, [published]);
    expect(answer.status, answer.text).toBe(202);
    const [request] = await receiver.waitForRequests(1, { timeoutMs: 20_000 });
    const { datacontenttype: _, ...withoutNull } = published;
    expect(JSON.parse(request!.body)).toEqual(withoutNull);
  });

  it('EDU-1, JSON-1, issue 36 item 11: a binary-mode subscriber gets the 200 KB event by reference, with no Content-Type claimed for data it does not carry', async () => {
    const { receiver, type } = await pushTarget({ contentmode: 'binary' });
    const published = nullTyped(type);
    expect((await tryPublish(koerier.url, publisher, published)).status).toBe(202);
    const [request] = await receiver.waitForRequests(1, { timeoutMs: 20_000 });
    expect(request!.headers['ce-id']).toBe(published.id);
    expect(request!.headers['ce-dataref']).toMatch(new RegExp(`^${koerier.url}/payloads/[A-Za-z0-9_-]{43}$`));
    expect(request!.headers['ce-datacontenttype']).toBeUndefined();
    const fetched = await fetch(request!.headers['ce-dataref'] as string, {
      headers: { authorization: `Bearer ${subscriber}` },
    });
    expect(fetched.status).toBe(200);
    expect(sha256(Buffer.from(await fetched.arrayBuffer()))).toBe(request!.headers['ce-koerierdatadigest']);
  });
});
