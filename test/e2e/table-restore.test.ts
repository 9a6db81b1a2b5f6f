/**
 * Issue 31 item 6 (and issue 35, "Backups"): the restore procedure of docs/OPERATIONS.md, "Restore
 * a table from a point in time", on the laptop's emulated tables. RestoreTableToPointInTime is
 * AWS's (the emulator has no point-in-time recovery): a copy of each table taken at a point stands
 * in for the table it would make. Then the live tables are damaged through the API (a subscription
 * deleted, one changed, one added), and the procedure's copy step (`npm run restore-table`,
 * bin/restore-table.ts) writes them back: the subscriptions and the route index are exactly what
 * they were at that point, and the restored subscription receives events again.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  DescribeTableCommand,
  ScanCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRestoreTable } from '../../bin/restore-table.js';
import { batchWriteAll } from '../../functions/aws/dynamodb-batch-write.js';
import { canonical } from '../../functions/aws/dynamodb-table-restore.js';
import { settingEnv } from '../../functions/config.js';
import { apiAs, callApi, publishEvent } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:restore';
const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let receiver: HttpsReceiver;
let subscriber: string;

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.publishers]: JSON.stringify({ 'dev-publisher': [''] }),
      [settingEnv.entitlements]: JSON.stringify({ 'dev-subscriber': [{ typePrefix: '' }] }),
    },
    { trustAuthority: authority },
  );
  receiver = await startHttpsReceiver({ authority });
  subscriber = await koerier.host.issueToken('dev-subscriber', ['subscriptions:manage']);
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
});

const dynamodb = (): DynamoDBClient => koerier.host.awsClients.dynamodb;

/** Every item of a table, each as one canonical text, sorted: two tables compare equal exactly when they hold the same items. */
async function itemsOf(table: string): Promise<string[]> {
  const items: string[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb().send(
      new ScanCommand({ TableName: table, ConsistentRead: true, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }),
    );
    items.push(...(page.Items ?? []).map(canonical));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items.sort();
}

/** What RestoreTableToPointInTime would make now: a new table with the live one's key and its items. */
async function standInForRestore(live: string): Promise<string> {
  const { Table } = await dynamodb().send(new DescribeTableCommand({ TableName: live }));
  const keyNames = new Set(Table!.KeySchema!.map((key) => key.AttributeName));
  const restored = `${live}-restored-${randomUUID().slice(0, 8)}`;
  await dynamodb().send(
    new CreateTableCommand({
      TableName: restored,
      KeySchema: Table!.KeySchema,
      AttributeDefinitions: Table!.AttributeDefinitions!.filter((d) => keyNames.has(d.AttributeName)),
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  const items = (await dynamodb().send(new ScanCommand({ TableName: live, ConsistentRead: true }))).Items ?? [];
  await batchWriteAll(
    dynamodb(),
    restored,
    items.map((Item) => ({ PutRequest: { Item } })),
    'stand-in',
  );
  return restored;
}

async function subscribe(type: string): Promise<string> {
  const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body['id'] as string;
}

async function restore(args: readonly string[]): Promise<{ status: number; output: string }> {
  const lines: string[] = [];
  const status = await runRestoreTable(args, { out: (line) => lines.push(line), dynamodb: dynamodb() });
  return { status, output: lines.join('\n') };
}

describe('issue 31 item 6: restore a table from a point in time, on the laptop tables', () => {
  it('LIVE-6, issue 31 item 6, issue 35: after damage, the copy step brings subscriptions and routes back to their state at the point, and the restored subscription is routed again', async () => {
    const typeA = `nl.example.restore.a${randomUUID().slice(0, 8)}.v1`;
    const typeB = `nl.example.restore.b${randomUUID().slice(0, 8)}.v1`;
    const a = await subscribe(typeA);
    const b = await subscribe(typeB);
    const tables = ['subscriptions', 'routes'].map((name) => koerier.host.config.resources.table(name as 'routes'));

    // The point in time: the state, and what RestoreTableToPointInTime would make of each table.
    const earlier = await Promise.all(tables.map(itemsOf));
    const restored = await Promise.all(tables.map(standInForRestore));

    // Damage after the point: a subscription deleted, one changed, one added.
    expect((await callApi(koerier.url, subscriber, 'DELETE', `/subscriptions/${a}`)).status).toBe(200);
    const changed = await callApi(koerier.url, subscriber, 'PATCH', `/subscriptions/${b}`, {
      types: [`${typeB}.changed`],
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const c = await subscribe(`nl.example.restore.c${randomUUID().slice(0, 8)}.v1`);
    const damaged = await Promise.all(tables.map(itemsOf));
    expect(damaged).not.toEqual(earlier);

    // Without --apply: the report, and nothing written.
    const dryRun = await restore(['--from', restored[0]!, '--to', tables[0]!]);
    expect(dryRun.status).toBe(0);
    expect(dryRun.output).toContain('2 items would restore (missing or changed since the point in time)');
    expect(dryRun.output).toContain('1 newer items would be deleted');
    expect(await Promise.all(tables.map(itemsOf))).toEqual(damaged);

    for (const [index, live] of tables.entries()) {
      const applied = await restore(['--from', restored[index]!, '--to', live, '--apply']);
      expect(applied.status, applied.output).toBe(0);
    }
    expect(await Promise.all(tables.map(itemsOf))).toEqual(earlier);

    expect((await callApi(koerier.url, subscriber, 'GET', `/subscriptions/${a}`)).body).toMatchObject({
      id: a,
      types: [typeA],
      status: 'active',
    });
    expect((await callApi(koerier.url, subscriber, 'GET', `/subscriptions/${b}`)).body['types']).toEqual([typeB]);
    expect((await callApi(koerier.url, subscriber, 'GET', `/subscriptions/${c}`)).status).toBe(404);
    const publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
    const id = randomUUID();
    await publishEvent(publisher, { id, source: SOURCE, type: typeA, data: { restored: true } });
    await eventually(
      'the event at the restored subscription',
      () => receiver.requests.some((request) => request.body.includes(id)),
      { timeoutMs: 30_000 },
    );
  });

  it('LIVE-6, issue 31 item 6: the copy step refuses a table of another key, the live table as its own source, and missing arguments', async () => {
    const [subscriptions, routes] = ['subscriptions', 'routes'].map((name) =>
      koerier.host.config.resources.table(name as 'routes'),
    );
    const otherKey = await restore(['--from', routes!, '--to', subscriptions!, '--apply']);
    expect(otherKey.status).toBe(1);
    expect(otherKey.output).toMatch(
      /^restore refused: .* has the key routeKey \(HASH, S\) \+ subscriptionId \(RANGE, S\)/,
    );
    expect((await restore(['--from', routes!, '--to', routes!])).status).toBe(1);
    expect((await restore(['--to', routes!])).status).toBe(2);
  });
});
