/** A queue consumer app: one batch of messages in, the ids of those to receive again out (partial batch failures). */
export interface QueueMessage {
  readonly messageId: string;
  readonly body: string;
  readonly receiptHandle: string;
  /** How often the queue handed this message out, this time included (at least 1). */
  readonly receiveCount: number;
  /** The message's String attributes (e.g. `koerier-correlation-id`); empty when it has none. */
  readonly attributes?: Readonly<Record<string, string>>;
}

export interface QueueBatch {
  readonly records: readonly QueueMessage[];
  /** Milliseconds left before the invocation's time limit. */
  remainingTimeMs(): number;
}

export type QueueApp = (batch: QueueBatch) => Promise<{ readonly failedMessageIds: readonly string[] }>;
