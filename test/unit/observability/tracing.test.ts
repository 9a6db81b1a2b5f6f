/**
 * X-Ray capture of the SDK clients (functions/aws/tracing.ts): the Tracer stays out of the bundles
 * (it is loaded from the Powertools layer at run time), captures every client when it is there,
 * and leaves the clients working, with one log line, when it is not.
 */
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { build } from 'esbuild';
import { describe, expect, it, vi } from 'vitest';
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

  it("issue 13 item 4, issue 27: Powertools' own Tracer captures each SDK client through its middleware stack, X-Ray's middleware added to each", async () => {
    const { Tracer } = await import('@aws-lambda-powertools/tracer');
    // The Tracer traces only inside Lambda, which it knows by this variable.
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs24.x');
    const settings = { region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } };
    const clients = {
      dynamodb: new DynamoDBClient(settings),
      sqs: new SQSClient(settings),
      s3: new S3Client(settings),
      kms: new KMSClient(settings),
    };
    const xray = () =>
      Object.values(clients).map(
        (client) => client.middlewareStack.identify().filter((entry) => /xray/i.test(entry)).length,
      );
    expect(xray()).toEqual([0, 0, 0, 0]);
    expect(tracedClients(clients, recordingLog(), () => ({ Tracer }))).toBe(clients);
    expect(xray().every((count) => count > 0)).toBe(true);
    vi.unstubAllEnvs();
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
    expect(
      inputs.filter((input) => input.includes('aws-xray-sdk') || input.includes('@aws-lambda-powertools/tracer')),
    ).toEqual([]);
  }, 60_000);
});
