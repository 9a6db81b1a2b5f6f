/**
 * The publishing half of `koerier load`: an open loop. Request i is due at start + i × batch/rate,
 * whatever the answers before it did, so a slow gateway shows as latency and late requests instead
 * of quietly lowering the offered rate (the "coordinated omission" of closed-loop generators).
 * Requests in flight are capped; a request that waits for a free slot past its turn counts as late.
 * Nothing is retried: a 429 or a 5xx is a figure of the run, not something to hide.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { KoerierProblem, type KoerierClient } from '../../client/koerier-client.js';
import { summarise, type PublishFigures } from './load-statistics.js';

/** A request sent this much after its turn is late. */
export const LATE_MS = 100;

export interface PublishPlan {
  readonly rate: number;
  readonly durationSeconds: number;
  readonly batch: number;
  readonly concurrency: number;
  readonly source: string;
  readonly type: string;
  /** Marks this run's events (`data.run`), so a pull can tell them from others of the type. */
  readonly runId: string;
}

export interface PublishProgress {
  /** Told after each answer with the events accepted so far. */
  onAccepted?(accepted: number): void;
}

export async function publishOpenLoop(
  api: KoerierClient,
  plan: PublishPlan,
  progress: PublishProgress = {},
): Promise<PublishFigures> {
  const totalEvents = plan.rate * plan.durationSeconds;
  const requests = Math.ceil(totalEvents / plan.batch);
  const intervalMs = (1000 * plan.batch) / plan.rate;
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let accepted = 0;
  let duplicates = 0;
  let late = 0;
  let inFlight = 0;
  let freed: (() => void) | undefined;
  let lastAnswer = performance.now();

  const send = async (index: number) => {
    const size = Math.min(plan.batch, totalEvents - index * plan.batch);
    const events = Array.from({ length: size }, (_, n) => ({
      specversion: '1.0',
      id: randomUUID(),
      source: plan.source,
      type: plan.type,
      // The end-to-end delay is measured from here.
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data: { run: plan.runId, n: index * plan.batch + n },
    }));
    const single = plan.batch === 1;
    const began = performance.now();
    try {
      const { data } = await api.POST('/events', {
        body: JSON.stringify(single ? events[0] : events),
        bodySerializer: (body: unknown) => body,
        headers: { 'content-type': single ? 'application/cloudevents+json' : 'application/cloudevents-batch+json' },
      });
      latencies.push(performance.now() - began);
      accepted += data?.acceptedCount ?? 0;
      duplicates += data?.duplicateCount ?? 0;
      progress.onAccepted?.(accepted);
    } catch (error) {
      const status = error instanceof KoerierProblem ? String(error.status) : 'network';
      errors[status] = (errors[status] ?? 0) + 1;
    } finally {
      lastAnswer = performance.now();
      inFlight--;
      freed?.();
    }
  };

  const started = performance.now();
  const pending = new Set<Promise<void>>();
  let next = 0;
  while (next < requests) {
    const elapsed = performance.now() - started;
    const due = Math.min(requests, Math.floor(elapsed / intervalMs) + 1);
    while (next < due && inFlight < plan.concurrency) {
      if (performance.now() - started - next * intervalMs > LATE_MS) late++;
      inFlight++;
      const request = send(next++);
      pending.add(request);
      void request.finally(() => pending.delete(request));
    }
    if (next < due) await new Promise<void>((resolve) => (freed = resolve));
    else await sleep(Math.max(0, started + next * intervalMs - performance.now()));
    freed = undefined;
  }
  await Promise.all(pending);

  const elapsedSeconds = Math.max(0.001, (lastAnswer - started) / 1000);
  return {
    rate: plan.rate,
    durationSeconds: plan.durationSeconds,
    batch: plan.batch,
    requests,
    eventsSent: totalEvents,
    accepted,
    duplicates,
    acceptedPerSecond: Math.round((accepted / elapsedSeconds) * 10) / 10,
    elapsedSeconds: Math.round(elapsedSeconds * 100) / 100,
    latency202: summarise(latencies),
    errorsByStatus: errors,
    throttled429: errors['429'] ?? 0,
    lateRequests: late,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
