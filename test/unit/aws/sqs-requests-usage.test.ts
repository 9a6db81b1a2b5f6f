/**
 * What the cost benchmarks count of the lean SQS client (bench/support/aws-usage.ts): every request
 * sent, retries included, as AWS bills them; one 64 KiB chunk per started 64 KiB of each request's
 * body; the entries of a batch as its items (issue 15, item 4: the same figures the SDK middleware
 * gave). The client sends to a local stub transport that answers as SQS does.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { recordAwsUsage } from '../../../bench/support/aws-usage.js';
import type { AwsHttpRequest, AwsHttpResponse } from '../../../functions/aws/aws-http-transport.js';
import { SendMessageBatchCommand, SendMessageCommand, SqsRequests } from '../../../functions/aws/sqs-requests.js';

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/koerier-inbound';

describe('issue 15: the cost benchmarks count the lean SQS client as they counted the SDK client', () => {
  it('issue 15: requests with their retries, 64 KiB chunks of each request body, and batch entries as items, per stage', async () => {
    const bodies: number[] = [];
    let failNext = 1;
    const sqs = new SqsRequests({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      transport: async (request: AwsHttpRequest): Promise<AwsHttpResponse> => {
        bodies.push(request.body!.length);
        if (failNext-- > 0) return { statusCode: 503, headers: {}, body: Buffer.from('{"__type":"com.amazon.coral.service#ServiceUnavailable"}') };
        const input = JSON.parse(request.body!.toString('utf8')) as { MessageBody?: string; Entries?: { Id: string; MessageBody: string }[] };
        const answer = input.Entries
          ? { Successful: input.Entries.map((entry) => ({ Id: entry.Id, MessageId: `m-${entry.Id}`, MD5OfMessageBody: md5(entry.MessageBody) })), Failed: [] }
          : { MessageId: 'm', MD5OfMessageBody: md5(input.MessageBody!) };
        return { statusCode: 200, headers: {}, body: Buffer.from(JSON.stringify(answer)) };
      },
    });
    const usage = recordAwsUsage({
      dynamodb: { observeAttempts: () => undefined, observeCalls: () => undefined },
      sqs,
      s3Requests: { observeAttempts: () => undefined },
    });
    const big = 'x'.repeat(50_000);
    // Three entries of ~50 KB: one body of ~150 KB, three chunks; sent twice (a 503, then stored).
    await usage.invocation('ingest', 3, () =>
      sqs.send(new SendMessageBatchCommand({ QueueUrl: QUEUE_URL, Entries: ['0', '1', '2'].map((Id) => ({ Id, MessageBody: big })) })),
    );
    await usage.invocation('router', 1, () => sqs.send(new SendMessageCommand({ QueueUrl: QUEUE_URL, MessageBody: 'small' })));
    const stages = usage.snapshot();
    expect(bodies).toHaveLength(3);
    expect(stages['ingest']).toMatchObject({
      requests: { 'sqs:SendMessageBatch': 2 },
      items: { 'sqs:SendMessageBatch': 3 },
      units: { sqs64KiBChunks: 2 * Math.ceil(bodies[0]! / 65_536) },
    });
    expect(Math.ceil(bodies[0]! / 65_536)).toBe(3);
    expect(stages['router']).toMatchObject({ requests: { 'sqs:SendMessage': 1 }, items: { 'sqs:SendMessage': 1 }, units: { sqs64KiBChunks: 1 } });
  });
});
