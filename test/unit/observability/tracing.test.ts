/**
 * X-Ray capture of the SDK clients (functions/aws/tracing.ts): the Tracer stays out of the bundles
 * (it is loaded from the Powertools layer at run time), captures every client when it is there,
 * and leaves the clients working, with one log line, when it is not.
 */
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
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

  it('a function bundle holds neither the Tracer nor the X-Ray SDK', async () => {
    const root = path.resolve(import.meta.dirname, '../../..');
    const { metafile } = await build({
      ...esbuildOptions(path.join(root, 'functions/handlers/router.ts'), path.join(root, '.koerier/bundle-check/index.mjs')),
      write: false,
      metafile: true,
      logLevel: 'error',
    });
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.some((input) => input.includes('functions/aws/tracing.ts'))).toBe(true);
    expect(inputs.filter((input) => input.includes('aws-xray-sdk') || input.includes('@aws-lambda-powertools/tracer'))).toEqual([]);
  }, 60_000);
});
