/** What the replay unit tests share: archived events, a subscription record, and the worker's dependencies over memory adapters. */
import { archiveObjects, type ArchivedEvent } from '../../../functions/core/replay/archive-format.js';
import {
  MemoryEventArchive,
  MemoryReplayQueue,
  MemoryReplayStore,
} from '../../support/memory/replay-memory-adapters.js';
import type { ReplayRecord } from '../../../functions/core/replay/ports.js';
import type { ReplayWorkerDependencies } from '../../../functions/core/replay/replay-worker.js';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import type { Entitlements } from '../../../functions/core/subscriptions/entitlements.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';

export const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:lvs';
export const NOW = Date.UTC(2026, 10, 23, 12);
export const HOUR = 3_600_000;

export function archived(id: string, acceptedAt: number, type = 'nl.example.a.v1', source = SOURCE): ArchivedEvent {
  return { acceptedAt, source, id, type, json: JSON.stringify({ specversion: '1.0', id, source, type, data: { id } }) };
}

export async function archiveAll(
  archive: MemoryEventArchive,
  batches: readonly (readonly ArchivedEvent[])[],
): Promise<void> {
  for (const batch of batches) for (const object of archiveObjects(batch)) await archive.put(object.key, object.body);
}

export function subscription(over: Partial<Subscription> = {}): Subscription {
  return {
    id: 'sub-1',
    owner: 'client-a',
    sink: 'https://ontvanger.example/hook',
    delivery: 'push',
    contentMode: 'structured',
    batchSupported: false,
    validation: 'agreed',
    status: 'active',
    routeKeys: [],
    createdAt: new Date(NOW).toISOString(),
    updatedAt: new Date(NOW).toISOString(),
    version: 1,
    ...over,
  };
}

export function runningReplay(over: Partial<ReplayRecord> = {}): ReplayRecord {
  return {
    subscriptionId: 'sub-1',
    replayId: 'replay-1',
    state: 'running',
    from: NOW - 10 * HOUR,
    to: NOW,
    requestedBy: 'client-a',
    createdAt: NOW,
    updatedAt: NOW,
    scanned: 0,
    matched: 0,
    sent: 0,
    failed: 0,
    version: 1,
    ...over,
  };
}

export function workerWorld(
  options: { subscription?: Subscription; entitlements?: Entitlements; retentionMs?: number; failSends?: number } = {},
) {
  let clock = NOW;
  const archive = new MemoryEventArchive();
  const store = new MemoryReplayStore(() => clock);
  const queue = new MemoryReplayQueue();
  const sent: DeliveryMessage[] = [];
  const finished: ReplayRecord[] = [];
  let failSends = options.failSends ?? 0;
  const current = { subscription: options.subscription ?? subscription() };
  const deps: ReplayWorkerDependencies = {
    store,
    queue,
    archive,
    subscriptions: { get: async (id) => (id === current.subscription.id ? current.subscription : undefined) },
    entitlements: options.entitlements ?? new Map([['client-a', [{ typePrefix: '' }]]]),
    outbox: {
      enqueue: async (_subscription, messages) => {
        if (failSends-- > 0) throw new Error('SQS refused');
        sent.push(...messages.map((message) => decodeDeliveryMessage(encodeDeliveryMessage(message))));
      },
    },
    retentionMs: options.retentionMs ?? 30 * 24 * HOUR,
    clock: () => clock,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    onReplayFinished: (record) => void finished.push(record),
  };
  return {
    deps,
    archive,
    store,
    queue,
    sent,
    finished,
    current,
    setClock: (at: number) => (clock = at),
  };
}
