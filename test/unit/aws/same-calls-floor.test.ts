/**
 * The delivery bench's floor of the same calls (bench/support/same-calls-floor.ts) sends the
 * DynamoDB requests the delivery function sent, counted in the same run, not a hand-written list:
 * the same operations with the same inputs, at the same rate per message, reads before the POSTs
 * and writes after. Two SDK DynamoDB clients, each talking to a local HTTP stand-in that records
 * what it is sent, stand for the host's and the floor's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchGetItemCommand, BatchWriteItemCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDbCallRecorder, replayableHeaders } from '../../../bench/support/same-calls-floor.js';
import { startAwsServiceStub, type AwsServiceStub } from '../../support/aws-service-stub.js';

/** Where each client's requests go, by the client id each puts in its user agent. */
const sentBy = new Map<string, { target: string; body: string }[]>();
let stub: AwsServiceStub;
beforeAll(async () => {
  stub = await startAwsServiceStub((request, response, body) => {
    const app = /app\/(\S+)/.exec(String(request.headers['user-agent']))?.[1] ?? '';
    sentBy.get(app)?.push({ target: String(request.headers['x-amz-target']), body });
    response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{}');
  });
});
afterAll(() => stub.close());

let clients = 0;
function client(sent: { target: string; body: string }[]): DynamoDBClient {
  const app = `client${++clients}`;
  sentBy.set(app, sent);
  return new DynamoDBClient({
    region: 'eu-west-1',
    endpoint: stub.endpoint,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    customUserAgent: `app/${app}`,
  });
}

describe('issue 15: the delivery floor makes the same DynamoDB requests as Koerier', () => {
  it('issue 15: the requests recorded while recording, replayed at their rate per message with the same bodies, reads apart from writes', async () => {
    const koerierSent: { target: string; body: string }[] = [];
    const koerier = client(koerierSent);
    const recorder = new DynamoDbCallRecorder(koerier);
    // Not recorded: before the drain.
    await koerier.send(new GetItemCommand({ TableName: 'subscriptions', Key: { pk: { S: 'before' } } }));
    recorder.recording = true;
    // Twenty messages in two batches of ten: a targets read and a history write each, one subscription read.
    for (const batch of [1, 2]) {
      await koerier.send(
        new BatchGetItemCommand({
          RequestItems: { deliveries: { Keys: [{ pk: { S: `sub#${batch}` }, sk: { S: 'target' } }] } },
        }),
      );
      await koerier.send(
        new BatchWriteItemCommand({
          RequestItems: {
            deliveries: [{ PutRequest: { Item: { pk: { S: `sub#${batch}` }, records: { S: 'x'.repeat(300) } } } }],
          },
        }),
      );
    }
    await koerier.send(new GetItemCommand({ TableName: 'subscriptions', Key: { pk: { S: 'cached-once' } } }));
    recorder.recording = false;
    await koerier.send(new GetItemCommand({ TableName: 'subscriptions', Key: { pk: { S: 'after' } } }));

    expect(recorder.perMessage(20)).toEqual({ BatchGetItem: 0.1, BatchWriteItem: 0.1, GetItem: 0.05 });

    const replay = recorder.replay(20);
    const floorSent: { target: string; body: string }[] = [];
    const floor = client(floorSent);
    // The floor drains twenty messages in two batches of ten, as Koerier did.
    const operations: string[][] = [];
    for (let batch = 0; batch < 2; batch++) {
      const reads = replay.readsFor(10);
      const writes = replay.writesFor(10);
      operations.push([...reads, ...writes].map((command) => command.constructor.name.replace(/Command$/, '')));
      for (const command of [...reads, ...writes]) await floor.send(command);
    }
    // The single subscription read falls due once half of it is owed twice: in the second batch.
    expect(operations).toEqual([
      ['BatchGetItem', 'BatchWriteItem'],
      ['BatchGetItem', 'GetItem', 'BatchWriteItem'],
    ]);
    const recordedBodies = koerierSent.slice(1, -1).map(({ target, body }) => `${target} ${body}`);
    expect(floorSent.map(({ target, body }) => `${target} ${body}`).sort()).toEqual(recordedBodies.sort());
  });

  it("issue 15: each item the floor writes again can be given a key of its own, as each of Koerier's writes adds an item", async () => {
    const koerier = client([]);
    const seen = new DynamoDbCallRecorder(koerier);
    seen.recording = true;
    const put = (sk: string) => ({ PutRequest: { Item: { pk: { S: 'sub#1' }, sk: { S: sk }, records: { S: '[]' } } } });
    const write = new BatchWriteItemCommand({
      RequestItems: {
        deliveries: [put('attempt#1'), { DeleteRequest: { Key: { pk: { S: 'sub#1' }, sk: { S: 'x' } } } }],
      },
    });
    await koerier.send(write);
    let renewed = 0;
    const [command] = seen.replay(1, (item) => ({ ...item, sk: { S: `attempt#${++renewed + 1}` } })).writesFor(1);
    expect(command!.input).toEqual({
      RequestItems: {
        deliveries: [put('attempt#2'), { DeleteRequest: { Key: { pk: { S: 'sub#1' }, sk: { S: 'x' } } } }],
      },
    });
    // Koerier's own input is left as it was sent.
    expect(write.input.RequestItems!['deliveries']![0]).toEqual(put('attempt#1'));
  });

  it('issue 15: the floor resends the headers Koerier sent, less those Node sets and the per-delivery key', () => {
    expect(
      replayableHeaders({
        host: 'localhost:1',
        connection: 'keep-alive',
        'content-length': '300',
        'idempotency-key': 'k',
        authorization: 'Bearer t',
        'content-type': 'application/cloudevents+json; charset=utf-8',
      }),
    ).toEqual({ authorization: 'Bearer t', 'content-type': 'application/cloudevents+json; charset=utf-8' });
  });
});
