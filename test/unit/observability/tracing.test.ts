/**
 * X-Ray capture of the SDK clients (functions/aws/tracing.ts): the Tracer stays out of the bundles
 * (it is loaded from the Powertools layer at run time), captures every client when it is there,
 * and leaves the clients working, with one log line, when it is not.
 */
import path from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { DynamoDbRequests, GetItemCommand, PutItemCommand } from '../../../functions/aws/dynamodb-requests.js';
import { KmsRequests } from '../../../functions/aws/kms-requests.js';
import { S3Requests } from '../../../functions/aws/s3-requests.js';
import { GetQueueUrlCommand, SqsRequests } from '../../../functions/aws/sqs-requests.js';
import { tracedClients } from '../../../functions/aws/tracing.js';
import { esbuildOptions } from '../../../lib/bundling.js';
import { recordingLog } from '../../support/recording-log.js';

describe('tracing the SDK clients', () => {
  it('captures every client of the set with one Tracer that leaves node:http alone', () => {
    const captured: unknown[] = [];
    const options: unknown[] = [];
    const clients = { dynamodb: { name: 'dynamodb' }, sqs: { name: 'sqs' } };
    const log = recordingLog();
    class Tracer {
      constructor(given: unknown) {
        options.push(given);
      }
      captureAWSv3Client<T>(client: T): T {
        captured.push(client);
        return client;
      }
    }
    expect(tracedClients(clients, log, () => ({ Tracer }))).toBe(clients);
    expect(captured).toEqual([clients.dynamodb, clients.sqs]);
    expect(options).toEqual([{ serviceName: 'koerier', captureHTTPsRequests: false }]);
    expect(log.lines).toEqual([]);
  });

  it('without the layer the clients stay as they are, and the log says how to get the subsegments', () => {
    const clients = { dynamodb: { name: 'dynamodb' } };
    const log = recordingLog();
    const missing = () => {
      throw new Error("Cannot find module '@aws-lambda-powertools/tracer'");
    };
    expect(tracedClients(clients, log, missing)).toBe(clients);
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]!.message).toContain('koerier:powertoolsLayerArn');
  });

  /** A Tracer that records the subsegments the lean clients open, and the clients handed to the SDK capture. */
  function recordingTracer() {
    const subsegments: { name: string; attributes: Record<string, unknown>; errors: Error[]; closed: boolean }[] = [];
    const captured: unknown[] = [];
    class Tracer {
      captureAWSv3Client<T>(client: T): T {
        captured.push(client);
        return client;
      }
      getSegment() {
        return {
          addNewSubsegment: (name: string) => {
            const subsegment = { name, attributes: {} as Record<string, unknown>, errors: [] as Error[], closed: false };
            subsegments.push(subsegment);
            return {
              addAttribute: (key: string, value: unknown) => void (subsegment.attributes[key] = value),
              addError: (error: Error) => void subsegment.errors.push(error),
              close: () => void (subsegment.closed = true),
            };
          },
        };
      }
    }
    return { Tracer, subsegments, captured };
  }

  it('issue 13 item 4, issue 15: the lean S3 client is not handed to the SDK capture; each of its operations is one aws subsegment, closed, with its error', async () => {
    const { Tracer, subsegments, captured } = recordingTracer();
    let answer = { statusCode: 200, body: Buffer.from('hallo') };
    const s3 = new S3Requests({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      maxAttempts: 1,
      transport: async () => ({ statusCode: answer.statusCode, headers: {}, body: answer.body }),
    });
    const dynamodb = { name: 'dynamodb' };
    tracedClients({ dynamodb, s3 }, recordingLog(), () => ({ Tracer }));
    expect(captured).toEqual([dynamodb]);
    expect((await s3.getObject('bucket', 'payloads/a'))?.body.toString()).toBe('hallo');
    answer = { statusCode: 403, body: Buffer.from('<Error><Code>AccessDenied</Code></Error>') };
    await expect(s3.putObject({ bucket: 'bucket', key: 'payloads/b', body: Buffer.from('x'), contentType: 'text/plain' })).rejects.toThrow('AccessDenied');
    expect(subsegments.map(({ errors, ...subsegment }) => ({ ...subsegment, errors: errors.map((error) => error.message) }))).toEqual([
      { name: 'S3', attributes: { namespace: 'aws', aws: { operation: 'GetObject' } }, errors: [], closed: true },
      { name: 'S3', attributes: { namespace: 'aws', aws: { operation: 'PutObject' } }, errors: ['S3 PutObject failed: AccessDenied (HTTP 403)'], closed: true },
    ]);
  });

  it("issue 13 item 4, issue 15: the lean KMS client is not handed to the SDK capture either; its operations are KMS subsegments, as X-Ray names the SDK client's", async () => {
    const { Tracer, subsegments, captured } = recordingTracer();
    const kms = new KmsRequests({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      transport: async () => ({ statusCode: 200, headers: {}, body: Buffer.from('{"KeySpec":"ECC_NIST_P256"}') }),
    });
    tracedClients({ kms }, recordingLog(), () => ({ Tracer }));
    expect(captured).toEqual([]);
    expect((await kms.getPublicKey('alias/k')).keySpec).toBe('ECC_NIST_P256');
    expect(subsegments.map(({ name }) => name)).toEqual(['KMS']);
  });

  it("issue 13 item 4, issue 15: the lean DynamoDB client's operations are DynamoDB subsegments, as X-Ray names the SDK client's (its service id), a failed condition recorded on its own", async () => {
    const { Tracer, subsegments, captured } = recordingTracer();
    const answers = [
      { statusCode: 200, body: '{"Item":{"pk":{"S":"a"}}}' },
      { statusCode: 400, body: '{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}' },
    ];
    const dynamodb = new DynamoDbRequests({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      transport: async () => {
        const answer = answers.shift()!;
        return { statusCode: answer.statusCode, headers: {}, body: Buffer.from(answer.body) };
      },
    });
    tracedClients({ dynamodb }, recordingLog(), () => ({ Tracer }));
    expect(captured).toEqual([]);
    expect((await dynamodb.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }))).Item).toEqual({ pk: { S: 'a' } });
    await expect(dynamodb.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'a' } } }))).rejects.toThrow('The conditional request failed');
    expect(subsegments.map(({ name, attributes, errors }) => ({ name, attributes, errors: errors.map((error) => error.name) }))).toEqual([
      { name: 'DynamoDB', attributes: { namespace: 'aws', aws: { operation: 'GetItem' } }, errors: [] },
      { name: 'DynamoDB', attributes: { namespace: 'aws', aws: { operation: 'PutItem' } }, errors: ['ConditionalCheckFailedException'] },
    ]);
  });

  it("issue 15: the lean SQS client's operations are SQS subsegments, as X-Ray named the SDK SQSClient's (its serviceId), not handed to the SDK capture", async () => {
    const { Tracer, subsegments, captured } = recordingTracer();
    const sqs = new SqsRequests({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      transport: async () => ({ statusCode: 200, headers: {}, body: Buffer.from('{"QueueUrl":"https://sqs.eu-west-1.amazonaws.com/1/q"}') }),
    });
    tracedClients({ sqs }, recordingLog(), () => ({ Tracer }));
    expect(captured).toEqual([]);
    expect((await sqs.send(new GetQueueUrlCommand({ QueueName: 'q' }))).QueueUrl).toBe('https://sqs.eu-west-1.amazonaws.com/1/q');
    expect(subsegments.map(({ name, attributes }) => ({ name, attributes }))).toEqual([
      { name: new SQSClient({ region: 'eu-west-1' }).config.serviceId, attributes: { namespace: 'aws', aws: { operation: 'GetQueueUrl' } } },
    ]);
    expect(subsegments[0]!.name).toBe('SQS');
  });

  it('a function bundle holds neither the Tracer nor the X-Ray SDK', async () => {
    const root = path.resolve(import.meta.dirname, '../../..');
    const { metafile } = await build({
      ...esbuildOptions(path.join(root, 'functions/handlers/router.ts'), path.join(root, '.koerier/bundle-check')),
      write: false,
      metafile: true,
      logLevel: 'error',
    });
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.some((input) => input.includes('functions/aws/tracing.ts'))).toBe(true);
    expect(inputs.filter((input) => input.includes('aws-xray-sdk') || input.includes('@aws-lambda-powertools/tracer'))).toEqual([]);
  }, 60_000);
});
