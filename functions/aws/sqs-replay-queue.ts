/** The replays queue (docs/REPLAY.md): one message per running replay, its next chunk, delayed to keep its pace. */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ReplayMessage, ReplayQueue } from '../core/replay/ports.js';

/** SQS's longest message delay. */
const MAX_DELAY_SECONDS = 900;

export class SqsReplayQueue implements ReplayQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async continueLater(message: ReplayMessage, delaySeconds: number): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify({ subscriptionId: message.subscriptionId, replayId: message.replayId }),
        DelaySeconds: Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.round(delaySeconds))),
      }),
    );
  }
}
