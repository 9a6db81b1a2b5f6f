/** In-memory adapters of the replay ports, for unit tests without emulators. */
import {
  ReplayRunningError,
  staleFailure,
  type EventArchive,
  type ReplayMessage,
  type ReplayQueue,
  type ReplayRecord,
  type ReplayState,
  type ReplayStore,
} from '../../../functions/core/replay/ports.js';

export class MemoryEventArchive implements EventArchive {
  readonly objects = new Map<string, Buffer>();
  requests = 0;

  async put(key: string, body: Buffer): Promise<void> {
    this.requests++;
    this.objects.set(key, body);
  }

  async list(prefix: string): Promise<string[]> {
    this.requests++;
    return [...this.objects.keys()].filter((key) => key.startsWith(prefix)).sort();
  }

  async get(key: string): Promise<Buffer | undefined> {
    this.requests++;
    return this.objects.get(key);
  }
}

export class MemoryReplayStore implements ReplayStore {
  readonly records = new Map<string, ReplayRecord>();
  readonly slots = new Map<string, { replayId: string; leaseUntil: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  async start(record: ReplayRecord, leaseUntil: number): Promise<void> {
    const slot = this.slots.get(record.subscriptionId);
    if (slot && slot.leaseUntil >= this.clock()) throw new ReplayRunningError(slot.replayId);
    const stale = slot && this.records.get(`${record.subscriptionId}/${slot.replayId}`);
    if (stale?.state === 'running')
      this.records.set(`${record.subscriptionId}/${slot!.replayId}`, {
        ...stale,
        ...staleFailure(stale, this.clock()),
      });
    this.slots.set(record.subscriptionId, { replayId: record.replayId, leaseUntil });
    this.records.set(`${record.subscriptionId}/${record.replayId}`, record);
  }

  async get(subscriptionId: string, replayId: string): Promise<ReplayRecord | undefined> {
    return this.records.get(`${subscriptionId}/${replayId}`);
  }

  async list(subscriptionId: string): Promise<ReplayRecord[]> {
    return [...this.records.values()].filter((record) => record.subscriptionId === subscriptionId);
  }

  async update(
    next: ReplayRecord,
    expectedVersion: number,
    leaseUntil: number,
    expectedState: ReplayState = 'running',
  ): Promise<boolean> {
    const current = this.records.get(`${next.subscriptionId}/${next.replayId}`);
    if (!current || current.version !== expectedVersion || current.state !== expectedState) return false;
    this.records.set(`${next.subscriptionId}/${next.replayId}`, next);
    const slot = this.slots.get(next.subscriptionId);
    if (slot?.replayId === next.replayId) slot.leaseUntil = leaseUntil;
    return true;
  }

  async release(subscriptionId: string, replayId: string): Promise<void> {
    if (this.slots.get(subscriptionId)?.replayId === replayId) this.slots.delete(subscriptionId);
  }
}

export class MemoryReplayQueue implements ReplayQueue {
  readonly messages: { message: ReplayMessage; delaySeconds: number }[] = [];

  async continueLater(message: ReplayMessage, delaySeconds: number): Promise<void> {
    this.messages.push({ message, delaySeconds });
  }
}
