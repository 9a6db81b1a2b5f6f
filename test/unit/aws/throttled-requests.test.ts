/**
 * Throttling counted (issue 27): the SDK's standard retry mode backs off and retries a throttled
 * request on its own, so the composition roots count each throttled attempt in the gateway's
 * metrics. A real SDK DynamoDB client against a local stand-in that throttles before it answers.
 */
import { createDynamoDbClient } from '../../../functions/aws/clients.js';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countThrottledRequests } from '../../../functions/aws/aws-request-observer.js';
import { EmfMetrics } from '../../../functions/aws/emf-metrics.js';
import { noMetrics, type Metrics } from '../../../functions/core/ports/metrics.js';
import { observability } from '../../../functions/config/resources.js';
import { startAwsServiceStub, type AwsServiceStub } from '../../support/aws-service-stub.js';

/** What the stand-in answers next; when none are left, an empty item. */
const answers: { status: number; body: object }[] = [];
let stub: AwsServiceStub;
beforeAll(async () => {
  stub = await startAwsServiceStub((_request, response) => {
    const answer = answers.shift() ?? { status: 200, body: {} };
    response
      .writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.0' })
      .end(JSON.stringify(answer.body));
  });
});
afterAll(() => stub.close());

function recordingMetrics(): Metrics & { throttled: string[] } {
  const throttled: string[] = [];
  return {
    ...noMetrics,
    throttled,
    awsRequestThrottled: (service, operation) => void throttled.push(`${service}:${operation}`),
  };
}

describe('issue 27: throttled AWS requests are counted', () => {
  it('CARD-8, issue 27: each throttled attempt counts once by service and operation, the SDK retries it, and other failures do not count', async () => {
    const metrics = recordingMetrics();
    const client = countThrottledRequests(
      createDynamoDbClient({
        region: 'eu-west-1',
        endpoint: stub.endpoint,
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      }),
      () => metrics,
    );
    answers.push({
      status: 400,
      body: {
        __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
        message: 'Rate of requests exceeds the allowed throughput.',
      },
    });
    await client.send(new GetItemCommand({ TableName: 'koerier-idempotency', Key: { pk: { S: 'a' } } }));
    expect(metrics.throttled).toEqual(['DynamoDB:GetItem']);

    answers.push({
      status: 400,
      body: { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'no table' },
    });
    await expect(client.send(new GetItemCommand({ TableName: 'missing', Key: { pk: { S: 'a' } } }))).rejects.toThrow(
      'no table',
    );
    expect(metrics.throttled).toEqual(['DynamoDB:GetItem']);
    client.destroy();
  });

  it('CARD-8, issue 27: in AWS the count is an EMF figure on the service and operation, for the dashboard', () => {
    const lines: string[] = [];
    const metrics = new EmfMetrics('koerier-test', (line) => lines.push(line));
    metrics.awsRequestThrottled('SQS', 'SendMessageBatch');
    metrics.awsRequestThrottled('SQS', 'SendMessageBatch');
    metrics.flush();
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]!) as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Dimensions: string[][] }[] };
    };
    expect(record._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'Stack', 'Service', 'Operation']]);
    expect(record).toMatchObject({
      Service: 'SQS',
      Operation: 'SendMessageBatch',
      [observability.metrics.awsRequestsThrottled]: 2,
    });
  });
});
