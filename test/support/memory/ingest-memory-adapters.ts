/**
 * The ingest's ports in memory, for unit tests of the use case without emulators. They keep the
 * semantics the AWS adapters promise: the rate window counts per client in fixed one-minute
 * windows of the clock it is given; the queue stores all messages of a call or none.
 */
import { systemClock, type Clock } from '../../../functions/core/ports/clock.js';
import type { InboundMessage, InboundQueue, RateDecision, RateWindow } from '../../../functions/core/ingest/ports.js';

const WINDOW_MS = 60_000;

export class InMemoryRateWindow implements RateWindow {
  private readonly counts = new Map<string, number>();

  constructor(private readonly now: Clock = systemClock) {}

  async take(clientId: string, limitPerMinute: number): Promise<RateDecision> {
    const now = this.now();
    const windowStart = now - (now % WINDOW_MS);
    const key = `${clientId}\u0000${windowStart}`;
    const count = this.counts.get(key) ?? 0;
    if (count >= limitPerMinute)
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)) };
    this.counts.set(key, count + 1);
    return { allowed: true };
  }
}

export class InMemoryInboundQueue implements InboundQueue {
  readonly messages: InboundMessage[] = [];
  /** Set to make the next `send` calls throw, as SQS refusing the write would. */
  failWith: Error | undefined;

  async send(messages: readonly InboundMessage[]): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.messages.push(...messages);
  }
}
