/**
 * The end-to-end half of `koerier load`: a pull subscription made for the run (its own event type,
 * so it receives this run's events only), receivers that acknowledge everything they get and time
 * each event from its `time` (set by the publisher as it sent it) to its receipt, and the removal
 * of the subscription at the end, also when the run fails.
 */
import type { KoerierClient } from '../../client/koerier-client.js';
import { summarise, type EndToEndFigures } from './load-statistics.js';

type Received = { events: Record<string, unknown>[]; locks: { locktoken: string }[] };

export interface PullProbe {
  readonly subscription: string;
  /** Stops receiving once `expected` events have come, or `drainSeconds` after this call, then removes the subscription. */
  finish(expected: number, drainSeconds: number): Promise<EndToEndFigures>;
  /** Removes the subscription without waiting for anything (the run failed). */
  abandon(): Promise<void>;
}

export async function startPullProbe(
  api: KoerierClient,
  options: { readonly type: string; readonly runId: string; readonly receivers: number },
): Promise<PullProbe> {
  const { data } = await api.POST('/subscriptions', {
    body: { delivery: 'pull', types: [options.type] },
  });
  const subscription = (data as { id: string }).id;
  const path = { path: { id: subscription } };
  const delays: number[] = [];
  const seen = new Set<string>();
  let receivedTwice = 0;
  let stopAt = Number.POSITIVE_INFINITY;
  let expected = Number.POSITIVE_INFINITY;

  const receiver = async () => {
    while (Date.now() < stopAt && seen.size < expected) {
      const { data: received } = await api.POST('/subscriptions/{id}/events/receive', {
        params: path,
        body: { maxevents: 100, waitseconds: 1, lockseconds: 60 },
      });
      const { events, locks } = received as Received;
      const now = Date.now();
      for (const event of events) {
        const data = event['data'] as { run?: string } | undefined;
        if (data?.run !== options.runId) continue;
        const id = String(event['id']);
        if (seen.has(id)) receivedTwice++;
        else {
          seen.add(id);
          delays.push(now - Date.parse(String(event['time'])));
        }
      }
      if (locks.length > 0)
        await api.POST('/subscriptions/{id}/events/acknowledge', {
          params: path,
          body: { locktokens: locks.map((lock) => lock.locktoken) },
        });
    }
  };
  const running = Promise.allSettled(Array.from({ length: options.receivers }, receiver));
  const remove = async () => {
    await api.DELETE('/subscriptions/{id}', { params: path }).catch(() => undefined);
  };

  return {
    subscription,
    async finish(count, drainSeconds) {
      expected = count;
      stopAt = Date.now() + drainSeconds * 1000;
      const outcomes = await running;
      await remove();
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failed && seen.size < count) throw (failed as PromiseRejectedResult).reason;
      return {
        subscription,
        received: seen.size,
        missing: Math.max(0, count - seen.size),
        receivedTwice,
        delay: summarise(delays),
      };
    },
    async abandon() {
      stopAt = 0;
      await running;
      await remove();
    },
  };
}
