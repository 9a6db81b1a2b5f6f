/**
 * Where the adapters' clients send (issue 27): the hosts the AWS SDK resolves for the region, in
 * every partition Koerier may be deployed to, and with the FIPS and dual-stack settings an operator
 * may turn on through the SDK's own variables. Each request is stopped once it is signed, before
 * it leaves the process, so the test needs no network and no account.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetPublicKeyCommand } from '@aws-sdk/client-kms';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import type { DeserializeMiddleware } from '@smithy/types';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createDynamoDbClient,
  createKmsClient,
  createS3Client,
  createSqsClient,
} from '../../../functions/aws/clients.js';
import type { ObservableClient } from '../../../functions/aws/aws-request-observer.js';

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

class Stopped extends Error {}

/** The host and the signature's region and service of the first request `client` would send for `send`. */
async function firstRequest(
  client: ObservableClient & { destroy(): void },
  send: () => Promise<unknown>,
): Promise<string> {
  let seen = '';
  const stop: DeserializeMiddleware<object, object> = () => async (args) => {
    const request = args.request as { hostname: string; headers: Record<string, string> };
    const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\//.exec(request.headers['authorization'] ?? '');
    seen = `${request.hostname} (${scope?.[1]}/${scope?.[2]})`;
    throw new Stopped();
  };
  client.middlewareStack.add(stop, { step: 'deserialize', priority: 'high', name: 'stopBeforeSending' });
  await expect(send()).rejects.toBeInstanceOf(Stopped);
  client.destroy();
  return seen;
}

/** Each adapter's client, as the composition roots build it, and a request it makes. */
async function hostsFor(region: string): Promise<Record<string, string>> {
  const settings = { region, credentials: CREDENTIALS };
  const dynamodb = createDynamoDbClient(settings);
  const sqs = createSqsClient(settings);
  const s3 = createS3Client(settings);
  const kms = createKmsClient(settings);
  return {
    dynamodb: await firstRequest(dynamodb, () =>
      dynamodb.send(new GetItemCommand({ TableName: 'koerier-idempotency', Key: { pk: { S: 'a' } } })),
    ),
    sqs: await firstRequest(sqs, () => sqs.send(new GetQueueUrlCommand({ QueueName: 'koerier-inbound' }))),
    s3: await firstRequest(s3, () => s3.send(new GetObjectCommand({ Bucket: 'koerier-payloads', Key: 'payloads/a' }))),
    kms: await firstRequest(kms, () => kms.send(new GetPublicKeyCommand({ KeyId: 'alias/koerier-signing' }))),
  };
}

describe('issue 27: the SDK resolves each adapter client’s endpoint for the region', () => {
  beforeEach(() => {
    // As in Lambda: no endpoint override, FIPS and dual-stack off unless a test turns them on.
    for (const name of [
      'AWS_ENDPOINT_URL',
      'AWS_ENDPOINT_URL_DYNAMODB',
      'AWS_ENDPOINT_URL_SQS',
      'AWS_ENDPOINT_URL_S3',
      'AWS_ENDPOINT_URL_KMS',
    ]) {
      vi.stubEnv(name, undefined);
    }
    vi.stubEnv('AWS_USE_FIPS_ENDPOINT', undefined);
    vi.stubEnv('AWS_USE_DUALSTACK_ENDPOINT', undefined);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('CARD-8, issue 27: eu-west-1 (the commercial partition) on amazonaws.com, S3 virtual-hosted', async () => {
    expect(await hostsFor('eu-west-1')).toEqual({
      dynamodb: 'dynamodb.eu-west-1.amazonaws.com (eu-west-1/dynamodb)',
      sqs: 'sqs.eu-west-1.amazonaws.com (eu-west-1/sqs)',
      s3: 'koerier-payloads.s3.eu-west-1.amazonaws.com (eu-west-1/s3)',
      kms: 'kms.eu-west-1.amazonaws.com (eu-west-1/kms)',
    });
  });

  it('CARD-8, issue 27: eusc-de-east-1 (the AWS European Sovereign Cloud) on amazonaws.eu, never amazonaws.com', async () => {
    expect(await hostsFor('eusc-de-east-1')).toEqual({
      dynamodb: 'dynamodb.eusc-de-east-1.amazonaws.eu (eusc-de-east-1/dynamodb)',
      sqs: 'sqs.eusc-de-east-1.amazonaws.eu (eusc-de-east-1/sqs)',
      s3: 'koerier-payloads.s3.eusc-de-east-1.amazonaws.eu (eusc-de-east-1/s3)',
      kms: 'kms.eusc-de-east-1.amazonaws.eu (eusc-de-east-1/kms)',
    });
  });

  it('CARD-8, issue 27: cn-north-1 (the China partition) on amazonaws.com.cn', async () => {
    expect(await hostsFor('cn-north-1')).toEqual({
      dynamodb: 'dynamodb.cn-north-1.amazonaws.com.cn (cn-north-1/dynamodb)',
      sqs: 'sqs.cn-north-1.amazonaws.com.cn (cn-north-1/sqs)',
      s3: 'koerier-payloads.s3.cn-north-1.amazonaws.com.cn (cn-north-1/s3)',
      kms: 'kms.cn-north-1.amazonaws.com.cn (cn-north-1/kms)',
    });
  });

  it('CARD-8, issue 27: us-gov-west-1 (GovCloud) in its own partition', async () => {
    expect(await hostsFor('us-gov-west-1')).toEqual({
      dynamodb: 'dynamodb.us-gov-west-1.amazonaws.com (us-gov-west-1/dynamodb)',
      sqs: 'sqs.us-gov-west-1.amazonaws.com (us-gov-west-1/sqs)',
      s3: 'koerier-payloads.s3.us-gov-west-1.amazonaws.com (us-gov-west-1/s3)',
      kms: 'kms.us-gov-west-1.amazonaws.com (us-gov-west-1/kms)',
    });
  });

  it('issue 27: AWS_USE_FIPS_ENDPOINT=true sends every client to its FIPS endpoint', async () => {
    vi.stubEnv('AWS_USE_FIPS_ENDPOINT', 'true');
    expect(await hostsFor('us-gov-west-1')).toEqual({
      dynamodb: 'dynamodb.us-gov-west-1.amazonaws.com (us-gov-west-1/dynamodb)',
      sqs: 'sqs.us-gov-west-1.amazonaws.com (us-gov-west-1/sqs)',
      s3: 'koerier-payloads.s3-fips.us-gov-west-1.amazonaws.com (us-gov-west-1/s3)',
      kms: 'kms-fips.us-gov-west-1.amazonaws.com (us-gov-west-1/kms)',
    });
  });

  it('issue 27: AWS_USE_DUALSTACK_ENDPOINT=true sends every client to its IPv4 and IPv6 endpoint', async () => {
    vi.stubEnv('AWS_USE_DUALSTACK_ENDPOINT', 'true');
    expect(await hostsFor('eu-west-1')).toEqual({
      dynamodb: 'dynamodb.eu-west-1.api.aws (eu-west-1/dynamodb)',
      sqs: 'sqs.eu-west-1.api.aws (eu-west-1/sqs)',
      s3: 'koerier-payloads.s3.dualstack.eu-west-1.amazonaws.com (eu-west-1/s3)',
      kms: 'kms.eu-west-1.api.aws (eu-west-1/kms)',
    });
  });
});
