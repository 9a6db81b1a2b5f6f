/**
 * Observability end to end on the laptop host (issue 13, item 4): one event's journey carries one
 * correlation id through every stage — the ingest's, the router's and the delivery's log lines and
 * the receiver's `X-Correlation-ID` header — and the host serves the functions' figures in the
 * Prometheus text format at GET /metrics after real traffic.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger } from '../../functions/app/logger.js';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, publishEvents } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

const authority = createLocalCertificateAuthority();
const logLines: string[] = [];
let restoreLogger: () => void;
let koerier: TestHost;
let dir: string;
let publisher: string;
let receiver: HttpsReceiver;
let subscriptionId: string;
const type = `nl.example.observe.${randomUUID().slice(0, 8)}.v1`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-observe-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  restoreLogger = logger.captureTo((line) => logLines.push(line), 'info');
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
  });
  publisher = await koerier.token('dev-publisher', ['events:publish']);
  const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
  const { data: created, response } = await apiAs(koerier.url, subscriber).POST('/subscriptions', {
    body: { sink: receiver.url, types: [type], validation: 'agreed', sinkcredential: receiver.sinkCredential },
  });
  expect(response.status).toBe(201);
  subscriptionId = created!.id;
});

afterAll(async () => {
  restoreLogger?.();
  await receiver?.close();
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Publishes one new event with `headers`; answers its id and the 202's headers. */
async function sendObservedEvent(headers: Record<string, string> = {}): Promise<{ id: string; answer: Headers }> {
  const id = randomUUID();
  const event = {
    specversion: '1.0',
    id,
    source: 'urn:nld:oin:00000001234567890000:systeem:observe',
    type,
    data: { note: 'not for logs' },
  };
  const { response } = await publishEvents(apiAs(koerier.url, publisher), event, { headers });
  expect(response.status).toBe(202);
  return { id, answer: response.headers };
}

/** The receiver's request that carried the event `id`. */
async function receivedRequest(id: string) {
  return eventually(`the receiver to get ${id}`, () => {
    const request = receiver.requests.find((candidate) => candidate.body.includes(id));
    return request;
  });
}

type Line = Record<string, unknown>;
function lines(): Line[] {
  return logLines.flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as Line] : []));
}

/** The log line of each stage of the event `id`, once all three are there. */
async function stagesOf(id: string, deliveryId: string): Promise<{ ingest: Line; router: Line; delivery: Line }> {
  return eventually(`a log line of every stage of ${id}`, () => {
    const all = lines();
    const ingest = all.find((line) => line['message'] === 'event accepted' && line['id'] === id);
    const router = all.find((line) => line['message'] === 'event routed' && line['id'] === id);
    const delivery = all.find((line) => line['message'] === 'delivery attempted' && line['deliveryId'] === deliveryId);
    return ingest && router && delivery ? { ingest, router, delivery } : undefined;
  });
}

describe('correlation ids (issue 13, item 4)', () => {
  it("CE-16: a caller's X-Correlation-ID is on the ingest's, the router's and the delivery's log line and in the receiver's request header", async () => {
    const correlationId = `order-${randomUUID()}`;
    const { id, answer } = await sendObservedEvent({ 'x-correlation-id': correlationId });
    expect(answer.get('x-correlation-id')).toBe(correlationId);
    const request = await receivedRequest(id);
    expect(request.headers['x-correlation-id']).toBe(correlationId);
    const stages = await stagesOf(id, request.headers['idempotency-key']!);
    expect(stages.ingest['correlationId']).toBe(correlationId);
    expect(stages.router['correlationId']).toBe(correlationId);
    expect(stages.delivery).toMatchObject({ correlationId, subscriptionId, outcome: 'delivered', status: 204 });
    // Context attributes only: the event's data is on no line of its journey.
    for (const line of Object.values(stages)) expect(JSON.stringify(line)).not.toContain('not for logs');
  });

  it("without a caller's id (or with a malformed one) the gateway's request id correlates every stage", async () => {
    for (const given of [{}, { 'x-correlation-id': 'not a token; <script>' }]) {
      const { id, answer } = await sendObservedEvent(given);
      const requestId = answer.get('apigw-requestid');
      expect(requestId).toBeTruthy();
      expect(answer.get('x-correlation-id')).toBe(requestId);
      const request = await receivedRequest(id);
      expect(request.headers['x-correlation-id']).toBe(requestId);
      const stages = await stagesOf(id, request.headers['idempotency-key']!);
      for (const line of Object.values(stages)) expect(line['correlationId']).toBe(requestId);
    }
  });
});

describe('GET /metrics on the laptop host', () => {
  it('serves, after real traffic, the counters the functions write as EMF records in AWS, in the Prometheus text format', async () => {
    const { id } = await sendObservedEvent();
    await receivedRequest(id);
    const response = await eventually('the delivery to be counted', async () => {
      const scraped = await fetch(`${koerier.origin}/metrics`);
      const text = await scraped.text();
      // The delivery of the last event is counted once its batch is settled, a moment after the receiver has it.
      const counted = text.includes(
        `koerier_subscription_deliveries_total{stack="koerier-local",subscription_id="${subscriptionId}",outcome="delivered"}`,
      );
      return counted ? { scraped, text } : undefined;
    });
    expect(response.scraped.status).toBe(200);
    expect(response.scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const value = (series: string) =>
      Number(new RegExp(`^${series.replace(/[{}"=,]/g, '\\$&')} (\\d+)$`, 'm').exec(response.text)?.[1]);
    expect(response.text).toContain('# TYPE koerier_events_accepted_total counter');
    expect(value('koerier_events_accepted_total{stack="koerier-local"}')).toBeGreaterThanOrEqual(1);
    expect(value('koerier_events_routed_total{stack="koerier-local"}')).toBeGreaterThanOrEqual(1);
    expect(value('koerier_delivery_outcomes_total{stack="koerier-local",outcome="delivered"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(
      value(
        `koerier_subscription_deliveries_total{stack="koerier-local",subscription_id="${subscriptionId}",outcome="delivered"}`,
      ),
    ).toBeGreaterThanOrEqual(1);
    expect(value('koerier_attempt_latency_count{stack="koerier-local"}')).toBeGreaterThanOrEqual(1);
    // A refused publish is counted under the rule that refused it.
    await expect(
      publishEvents(apiAs(koerier.url, publisher), { specversion: '1.0', id: 'x', type }),
    ).rejects.toMatchObject({ status: 400 });
    const after = await (await fetch(`${koerier.origin}/metrics`)).text();
    expect(after).toMatch(/^koerier_publish_rejected_total\{stack="koerier-local",rule="[a-z-]+"\} 1$/m);
  });
});
