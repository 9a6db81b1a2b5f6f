/**
 * What a DynamoDB call costs the client itself (issue 15, item 4): CPU per call of
 * @aws-sdk/client-dynamodb (middleware stack, serde, signing) and of the lean client
 * (functions/aws/dynamodb-requests.ts, signing and JSON), both answered at once in process, so no
 * network or emulator time is in the figures. Same inputs, same answers, same fixed credentials;
 * the two run in turns, the fastest round of each counts. `npm run bench -- dynamodb-client`.
 */
import os from 'node:os';
import { Readable } from 'node:stream';
import * as sdk from '@aws-sdk/client-dynamodb';
import * as lean from '../functions/aws/dynamodb-requests.js';

const CALLS = 3000;
const ROUNDS = 3;
const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-example' };
const TABLE = 'koerier-idempotency';

/** The ingest's claim: a conditional put of the pending answer (about 400 bytes). */
const claimInput = () => ({
  TableName: TABLE,
  Item: {
    pk: { S: `idempotency#dev-publisher#POST%20%2Fevents#${Math.random().toString(36).slice(2)}` },
    state: { S: 'in-progress' },
    fingerprint: { S: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg' },
    claimId: { S: '6f9d3f0c-1c1b-4a8e-9f0a-1b2c3d4e5f60' },
    lockExpiresAt: { N: String(Date.now() + 30_000) },
    expiresAt: { N: String(Math.floor(Date.now() / 1000) + 604_800) },
    pending: {
      S: JSON.stringify({ status: 202, headers: { 'content-type': 'application/json' }, body: '{"accepted":[{"source":"urn:nld:oin:1","id":"1"}]}' }),
    },
  },
  ConditionExpression: 'attribute_not_exists(pk) OR lockExpiresAt < :now',
  ExpressionAttributeValues: { ':now': { N: String(Date.now()) } },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
});
/** The delivery's read of a subscription's state, answered with an item of ten attributes. */
const getInput = { TableName: 'koerier-deliveries', Key: { pk: { S: 'sub#1' }, sk: { S: 'state' } }, ConsistentRead: true };
const getAnswer = {
  Item: Object.fromEntries([
    ['pk', { S: 'sub#1' }],
    ['sk', { S: 'state' }],
    ...Array.from({ length: 8 }, (_, i) => [`a${i}`, i % 2 ? { N: String(i * 1000) } : { S: `value-${i}-${'x'.repeat(40)}` }]),
  ]),
};

interface Figures {
  readonly microsecondsPerCall: number;
  readonly cpuMicrosecondsPerCall: number;
}

async function measure(call: () => Promise<unknown>): Promise<Figures> {
  for (let i = 0; i < 300; i++) await call();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) await call();
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { microsecondsPerCall: round((elapsed * 1000) / CALLS), cpuMicrosecondsPerCall: round((used.user + used.system) / CALLS) };
}

const round = (n: number) => Number(n.toFixed(1));

export async function run(): Promise<Record<string, unknown>> {
  let answer: object = {};
  const sdkClient = new sdk.DynamoDBClient({
    region: 'eu-west-1',
    credentials: CREDENTIALS,
    requestHandler: {
      handle: async () => ({
        response: { statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from(JSON.stringify(answer))]) },
      }),
    } as never,
  });
  const leanClient = new lean.DynamoDbRequests({
    region: 'eu-west-1',
    credentials: CREDENTIALS,
    transport: async () => ({ statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Buffer.from(JSON.stringify(answer)) }),
  });
  const kinds = {
    sdkPutItem: () => sdkClient.send(new sdk.PutItemCommand(claimInput())),
    leanPutItem: () => leanClient.send(new lean.PutItemCommand(claimInput())),
    sdkGetItem: () => sdkClient.send(new sdk.GetItemCommand(getInput)),
    leanGetItem: () => leanClient.send(new lean.GetItemCommand(getInput)),
  };
  const best: Record<string, Figures> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, call] of Object.entries(kinds)) {
      answer = name.endsWith('GetItem') ? getAnswer : {};
      const figures = await measure(call);
      const previous = best[name];
      if (!previous || figures.cpuMicrosecondsPerCall < previous.cpuMicrosecondsPerCall) best[name] = figures;
    }
  }
  sdkClient.destroy();
  leanClient.destroy();
  const ratio = (a: string, b: string) => Number((best[a]!.cpuMicrosecondsPerCall / best[b]!.cpuMicrosecondsPerCall).toFixed(2));
  return {
    description:
      'client CPU per DynamoDB call, answered at once in process (no network, no emulator): @aws-sdk/client-dynamodb against the lean client, same inputs and answers; fastest of the rounds',
    calls: CALLS,
    rounds: ROUNDS,
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    putItemClaim: { sdk: best['sdkPutItem'], lean: best['leanPutItem'], sdkToLeanCpuRatio: ratio('sdkPutItem', 'leanPutItem') },
    getItemTenAttributes: { sdk: best['sdkGetItem'], lean: best['leanGetItem'], sdkToLeanCpuRatio: ratio('sdkGetItem', 'leanGetItem') },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
