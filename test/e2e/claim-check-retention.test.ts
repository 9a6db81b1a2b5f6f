/**
 * Issue 36, item 8, on the laptop host: a claim-check object is kept as long as the archive can
 * replay the event that refers to it, plus what a delivery needs (NL GOV §3.4.7). With
 * `KOERIER_ARCHIVE_RETENTION_DAYS` at 60, the functions record each object's expiry 60 + 15 days
 * out, for data moved at ingest and for an upload alike, the ledger record outlives the object
 * (DynamoDB TTL), and the subscriber fetches the data.
 */
import { createHash, randomUUID } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { claimCheckRetentionSeconds, localName, tables } from '../../functions/config/resources.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, publishEvent } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';

const ARCHIVE_DAYS = 60;
const DAY_MS = 86_400_000;
const authority = createLocalCertificateAuthority();
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:claimretention';
let koerier: TestHost;
let publisher: string;
let subscriber: string;
let receiver: HttpsReceiver;
const type = `nl.example.claimretention.${randomUUID().slice(0, 8)}.v1`;

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.archiveRetentionDays]: String(ARCHIVE_DAYS),
    },
    { trustAuthority: authority },
  );
  publisher = await koerier.token('dev-publisher', ['events:publish']);
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
  receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
  const { response } = await apiAs(koerier.url, subscriber).POST('/subscriptions', {
    body: { sink: receiver.url, types: [type], validation: 'agreed', sinkcredential: receiver.sinkCredential },
  });
  expect(response.status).toBe(201);
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
});

/** The delivered event with this id, and the payload ledger's record of its data. */
async function deliveredWithRecord(
  id: string,
): Promise<{ event: Record<string, unknown>; objectExpiresAt: number; ttlSeconds: number }> {
  const [request] = await receiver.waitForRequests(1, {
    timeoutMs: 20_000,
    filter: (r) => r.method === 'POST' && r.body.includes(id),
  });
  const event = JSON.parse(request!.body) as Record<string, unknown>;
  const payloadId = (event['dataref'] as string).split('/').at(-1)!;
  const { Item: item } = await koerier.host.awsClients.dynamodb.send(
    new GetItemCommand({
      TableName: localName.table('idempotency'),
      Key: { [tables.idempotency.partitionKey.name]: { S: `payload#${payloadId}` } },
    }),
  );
  return {
    event,
    objectExpiresAt: Number(item!['objectExpiresAt']!.N),
    ttlSeconds: Number(item![tables.idempotency.ttlAttribute]!.N),
  };
}

const sha256 = (bytes: Buffer) => `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;

describe('claim-check lifetime follows the archive (issue 36, item 8)', () => {
  it('CARD-6, EDU-1, EDU-18, issue 36 item 8: data moved at ingest is kept the archive retention plus 15 days, its ledger record longer, and it is fetched', async () => {
    expect(claimCheckRetentionSeconds(ARCHIVE_DAYS)).toBe((ARCHIVE_DAYS + 15) * 86400);
    const id = randomUUID();
    const before = Date.now();
    await publishEvent(apiAs(koerier.url, publisher), {
      id,
      source: SOURCE,
      type,
      datacontenttype: 'text/plain',
      data: 'x'.repeat(100_000),
    });
    const after = Date.now();
    const { event, objectExpiresAt, ttlSeconds } = await deliveredWithRecord(id);
    expect(objectExpiresAt).toBeGreaterThanOrEqual(before + (ARCHIVE_DAYS + 15) * DAY_MS);
    expect(objectExpiresAt).toBeLessThanOrEqual(after + (ARCHIVE_DAYS + 15) * DAY_MS);
    // DynamoDB's TTL removes the record only after the object is gone: a late fetch hears 410, not 404.
    expect(ttlSeconds * 1000).toBeGreaterThan(objectExpiresAt);
    const fetched = await fetch(event['dataref'] as string, { headers: { authorization: `Bearer ${subscriber}` } });
    expect(fetched.status).toBe(200);
    expect(sha256(Buffer.from(await fetched.arrayBuffer()))).toBe(event['koerierdatadigest']);
  });

  it('EDU-1, issue 36 item 8: an uploaded object published within its window is kept as long', async () => {
    const bytes = Buffer.from('leerling;klas\n'.repeat(10_000));
    const { data: grant, response: granted } = await apiAs(koerier.url, publisher).POST('/payloads', {
      body: { size: bytes.length, digest: sha256(bytes), contenttype: 'text/csv' },
    });
    expect(granted.status).toBe(201);
    const headers = Object.fromEntries(Object.entries(grant!.headers).filter(([name]) => name !== 'content-length'));
    expect((await fetch(grant!.uploadurl, { method: 'PUT', headers, body: bytes })).status).toBe(200);
    const id = randomUUID();
    const published = Date.now();
    await publishEvent(apiAs(koerier.url, publisher), {
      id,
      source: SOURCE,
      type,
      datacontenttype: 'text/csv',
      dataref: grant!.dataref,
    });
    const { objectExpiresAt, ttlSeconds } = await deliveredWithRecord(id);
    // Counted from the upload's grant (at most a day before its publish), never shorter than the archive's reach.
    expect(objectExpiresAt).toBeGreaterThan(published + (ARCHIVE_DAYS + 14) * DAY_MS);
    expect(objectExpiresAt).toBeLessThanOrEqual(published + (ARCHIVE_DAYS + 15) * DAY_MS);
    expect(ttlSeconds * 1000).toBeGreaterThan(objectExpiresAt);
  });
});
