/**
 * Issue 35, a standby's pull queues (docs/DISASTER-RECOVERY.md, "Pull queues on the standby"): a
 * standby reads the pull subscriptions through the replicated subscriptions table, but nothing
 * replicates SQS, so it has none of their queues. The laptop host stands in for the standby: its
 * pull subscriptions' queues are deleted (what the standby lacks), and the take-over step
 * `npm run pull-queues` (bin/pull-queues.ts) first lists them, then makes them; the subscription
 * then receives what is published, as before.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPullQueues } from '../../bin/pull-queues.js';
import { SqsPullQueues, pullQueueName } from '../../functions/aws/sqs-pull-queues.js';
import { apiAs, callApi, publishEvent, type KoerierClient } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { eventually } from '../support/waiting.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e-standby';
// The laptop's queue prefix is the one `--stack koerier` gives (lib/koerier-stack.ts, pullQueuePrefixOf).
const STACK = 'koerier';
let koerier: TestHost;
let publisher: KoerierClient;
let consumer: string;

beforeAll(async () => {
  koerier = await startTestHost();
  publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
  consumer = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
});

afterAll(async () => {
  await koerier?.stop();
});

const clients = () => ({ dynamodb: koerier.host.awsClients.dynamodb, sqs: koerier.host.awsClients.sqs });

async function queueExists(name: string): Promise<boolean> {
  try {
    await clients().sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    return true;
  } catch {
    return false;
  }
}

async function pullQueues(args: string[]): Promise<{ status: number; output: string }> {
  const lines: string[] = [];
  const status = await runPullQueues(args, { out: (line) => lines.push(line), clients: clients() });
  return { status, output: lines.join('\n') };
}

describe('issue 35: the pull queues a standby lacks, made at take-over', () => {
  it('DR-2: the pull subscriptions without a queue are listed, then made with their settings, and receive again', async () => {
    const type = `nl.example.standby.${randomUUID().slice(0, 8)}.v1`;
    const created = await callApi(koerier.url, consumer, 'POST', '/subscriptions', {
      delivery: 'pull',
      types: [type],
      maxdeliverycount: 7,
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body['id'] as string;
    const table = koerier.host.config.resources.table('subscriptions');
    const name = pullQueueName(koerier.host.config.resources.pullQueuePrefix(), id);

    // What the standby has: the subscription (replicated), not its queues.
    await new SqsPullQueues(clients().sqs, koerier.host.config.resources.pullQueuePrefix()).remove(id);
    expect(await queueExists(name)).toBe(false);

    const listed = await pullQueues(['--stack', STACK, '--subscriptions-table', table]);
    expect(listed.status).toBe(0);
    expect(listed.output).toContain(`1 pull subscriptions have no queue: ${id}`);
    expect(listed.output).toContain('run again with --apply');
    expect(await queueExists(name)).toBe(false);

    const made = await pullQueues(['--stack', STACK, '--subscriptions-table', table, '--apply']);
    expect(made.status).toBe(0);
    expect(made.output).toContain(`1 pull subscriptions got their queue now: ${id}`);
    expect(await queueExists(name)).toBe(true);
    expect(await queueExists(`${name}-dlq`)).toBe(true);
    // Made with the subscription's own settings: the queue's redrive count is its maxdeliverycount and one
    // (the receive after the last delivery moves the event to the dead letters: sqs-pull-queues.ts).
    const { QueueUrl } = await clients().sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    const { Attributes } = await clients().sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['RedrivePolicy'] }),
    );
    expect(JSON.parse(Attributes!['RedrivePolicy']!)).toMatchObject({ maxReceiveCount: 8 });

    const again = await pullQueues(['--stack', STACK, '--subscriptions-table', table]);
    expect(again.output).toContain('0 pull subscriptions have no queue');

    await publishEvent(publisher, { source: SOURCE, type, data: { n: 1 } });
    const events = await eventually('the event received from the made queue', async () => {
      const received = await callApi(koerier.url, consumer, 'POST', `/subscriptions/${id}/events/receive`, {});
      const got = received.status === 200 ? (received.body['events'] as { source: string }[]) : [];
      return got.length > 0 && got;
    });
    expect(events.map((event) => event.source)).toEqual([SOURCE]);
  }, 60_000);

  it('DR-2: without both the stack and the table the command refuses, naming its usage', async () => {
    const refused = await pullQueues(['--stack', STACK]);
    expect(refused.status).toBe(2);
    expect(refused.output).toContain('usage: npm run pull-queues');
  });
});
