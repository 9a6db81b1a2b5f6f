/**
 * `GET /health` of the laptop host: each emulator answers one cheap call, or the host is not healthy.
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { HttpResponse } from '../functions/core/http/messages.js';
import type { Emulators } from './emulators.js';

export type PartState = 'ok' | 'down';

export interface HealthCheck {
  check(): Promise<HttpResponse>;
  close(): void;
}

export function createHealthCheck(emulators: Emulators): HealthCheck {
  const common = {
    region: emulators.region,
    credentials: {
      accessKeyId: emulators.awsEnvironment['AWS_ACCESS_KEY_ID'] ?? '',
      secretAccessKey: emulators.awsEnvironment['AWS_SECRET_ACCESS_KEY'] ?? '',
    },
    // A health probe answers now or counts as down: no retries, short timeouts.
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 2000 },
  };
  const dynamodb = new DynamoDBClient({ ...common, endpoint: emulators.endpoints.dynamodb });
  const sqs = new SQSClient({ ...common, endpoint: emulators.endpoints.sqs });
  const s3 = new S3Client({ ...common, endpoint: emulators.endpoints.s3, forcePathStyle: true });
  const probes: Record<string, () => Promise<unknown>> = {
    dynamodb: () => dynamodb.send(new ListTablesCommand({ Limit: 1 })),
    sqs: () => sqs.send(new ListQueuesCommand({ MaxResults: 1 })),
    s3: () => s3.send(new ListBucketsCommand({})),
  };
  return {
    async check() {
      const states = await Promise.all(
        Object.entries(probes).map(async ([part, probe]): Promise<[string, PartState]> => {
          try {
            await probe();
            return [part, 'ok'];
          } catch {
            return [part, 'down'];
          }
        }),
      );
      const parts = Object.fromEntries(states);
      const healthy = states.every(([, state]) => state === 'ok');
      return {
        status: healthy ? 200 : 503,
        headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
        body: JSON.stringify({ status: healthy ? 'ok' : 'unavailable', parts }),
      };
    },
    close() {
      dynamodb.destroy();
      sqs.destroy();
      s3.destroy();
    },
  };
}
