/** The SQS queues of functions/config/resources.ts, each with its dead-letter queue `<name>-dlq`. */
import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueSpec } from '../../functions/config/resources.js';

export interface QueuePair {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly spec: QueueSpec;
}

/**
 * A message is kept at most this long from when it was first sent: SQS keeps a message's original
 * enqueue time when it moves to a dead-letter queue, so the DLQ's retention bounds its whole life.
 */
export const DEAD_LETTER_RETENTION = Duration.days(14);

export class Queues extends Construct {
  readonly byName: ReadonlyMap<string, QueuePair>;

  constructor(scope: Construct, id: string, specs: Readonly<Record<string, QueueSpec>>) {
    super(scope, id);
    const queues = new Map<string, QueuePair>();
    for (const [name, spec] of Object.entries(specs)) {
      const deadLetterQueue = new sqs.Queue(this, `${name}-dlq`, {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: DEAD_LETTER_RETENTION,
      });
      const queue = new sqs.Queue(this, name, {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: Duration.seconds(spec.visibilityTimeoutSeconds),
        retentionPeriod: Duration.seconds(spec.retentionSeconds),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: spec.maxReceiveCount },
      });
      queues.set(name, { queue, deadLetterQueue, spec });
    }
    this.byName = queues;
  }
}
