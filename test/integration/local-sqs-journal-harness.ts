/**
 * One local-aws-sqs emulator with one queue, journalled to `<stateDir>/sqs` by local/sqs-journal.ts,
 * for the compaction tests (issue 15) and their worker. The messages go in and out through the
 * queue's own methods, the ones the emulator's SendMessage, ReceiveMessage and DeleteMessage call
 * and the journal watches, so that a backlog of thousands takes well under a second.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequestHandler } from 'local-aws-sqs';
import { openSqsJournal, type SqsJournalOptions } from '../../local/sqs-journal.js';

const QUEUE = 'backlog';

/** A body about the size of an ingested CloudEvent's message. */
export const bodyOf = (label: string) => `${label} `.padEnd(600, 'x');
export const labelOf = (body: string) => body.split(' ')[0] ?? '';

export function openJournalledQueue(stateDir: string, options: SqsJournalOptions = {}) {
  const { service } = createRequestHandler({
    port: 0,
    emulateQueueCreationLifecycle: false,
    queues: [{ QueueName: QUEUE }],
  });
  const journal = openSqsJournal(join(stateDir, 'sqs'), service, () => undefined, options);
  journal.watchNewQueues();
  const queue = service.Queues.find((candidate) => candidate.QueueName === QUEUE);
  if (!queue) throw new Error(`the emulator has no queue ${QUEUE}`);
  const receive = async (max: number) =>
    (await queue.receive({ VisibilityTimeout: 300, WaitTimeSeconds: 0, MaxNumberOfMessages: max })) as {
      MessageBody: string;
      ReceiptHandle: string;
    }[];
  return {
    journal,
    send: (labels: readonly string[]) => labels.forEach((label) => queue.setRecord({ MessageBody: bodyOf(label) })),
    /** Receives up to `count` messages and leaves them invisible for 300 s; returns their labels. */
    async receive(count: number): Promise<string[]> {
      return (await receive(count)).map((message) => labelOf(message.MessageBody));
    },
    /**
     * Receives `count` messages and deletes them, as a consumer does; returns their labels. A
     * short poll may come back empty while messages are held (SQS samples; the emulator answered
     * none during a long compaction on a loaded machine), so an empty answer is asked again for up
     * to two seconds before the queue is taken as empty: the caller still checks how many it got.
     */
    async consume(count: number): Promise<string[]> {
      const labels: string[] = [];
      let emptySince: number | undefined;
      while (labels.length < count) {
        const messages = await receive(Math.min(10, count - labels.length));
        if (messages.length === 0) {
          emptySince ??= Date.now();
          if (Date.now() - emptySince > 2_000) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        emptySince = undefined;
        for (const message of messages) {
          queue.delete(message.ReceiptHandle);
          labels.push(labelOf(message.MessageBody));
        }
      }
      return labels;
    },
    /** How many messages the emulator holds, visible or not (a new message is delayed until the next turn of the loop). */
    async held(): Promise<number> {
      await new Promise((resolve) => setTimeout(resolve, 5));
      // local-aws-sqs counts the invisible ones in ApproximateNumberOfMessages too.
      const attributes = queue.getAttributes(['ApproximateNumberOfMessages']) as Record<string, string>;
      return Number(attributes['ApproximateNumberOfMessages']);
    },
    /**
     * The labels of the messages the journal keeps, as its snapshot on disk lists them. Opening a
     * journal writes one of everything it read back, so right after the open this is what a restart
     * restored (receiving 6,000 messages ten at a time from the emulator takes half a minute).
     */
    async kept(): Promise<string[]> {
      const snapshot = JSON.parse(await readFile(join(stateDir, 'sqs', 'snapshot.json'), 'utf8')) as {
        queues: Record<string, { record: { MessageBody: string } }[]>;
      };
      return (snapshot.queues[QUEUE] ?? []).map((message) => labelOf(message.record.MessageBody));
    },
  };
}

export const labels = (prefix: string, count: number, from = 0) =>
  Array.from({ length: count }, (_, index) => `${prefix}-${from + index}`);

/** The messages of the snapshot on disk, by label, with their receive counts. */
export async function keptMessages(stateDir: string): Promise<Map<string, { receiveCount: string }>> {
  const snapshot = JSON.parse(await readFile(join(stateDir, 'sqs', 'snapshot.json'), 'utf8')) as {
    queues: Record<string, { record: { MessageBody: string; attributes: { ApproximateReceiveCount: string } } }[]>;
  };
  return new Map(
    (snapshot.queues[QUEUE] ?? []).map(({ record }) => [
      labelOf(record.MessageBody),
      { receiveCount: record.attributes.ApproximateReceiveCount },
    ]),
  );
}
