/**
 * Loaded into the soaked host with `--import` (bench/soak.ts): every few seconds it appends one JSON
 * line to the file named by SOAK_PROBE_FILE with
 *
 * - the host's `process.memoryUsage()` split (rss, heapTotal, heapUsed, external, arrayBuffers), so
 *   the soak can tell a growing JavaScript heap from growing native memory (LevelDB's buffers,
 *   Buffers) — the RSS alone cannot;
 * - the longest event-loop stall and the garbage collector's pauses since the previous line, so a
 *   latency spike can be laid against what the host's one thread was doing;
 * - the CPU time the host used since the previous line (user + system, ms), so its cost per event
 *   can be set against the share of the cores it gets on a busy machine.
 *
 * With SOAK_PROBE_SETTLED_EVERY_MS and the host started with `--expose-gc`, it also writes, that
 * often, a `settled` line: the same split right after a full garbage collection. V8 lets its old
 * generation fill to a few hundred MB before it collects, so the RSS of one moment swings by 100 MB
 * and more with no change in what the host keeps; after a full collection what remains is what is
 * retained, and that is what grows when something leaks.
 *
 * Nothing of the host is changed; without the variable the probe does nothing.
 */
import { appendFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';

const file = process.env['SOAK_PROBE_FILE'];
const everyMs = Number(process.env['SOAK_PROBE_EVERY_MS'] ?? '5000');

if (file) {
  const mb = (bytes: number) => Math.round(bytes / 104857.6) / 10;
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  let cpu = process.cpuUsage();
  let gcPauseMs = 0;
  let gcMaxPauseMs = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcPauseMs += entry.duration;
      gcMaxPauseMs = Math.max(gcMaxPauseMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  const write = () => {
    const usage = process.memoryUsage();
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const line = {
      at: Date.now(),
      rssMb: mb(usage.rss),
      heapTotalMb: mb(usage.heapTotal),
      heapUsedMb: mb(usage.heapUsed),
      externalMb: mb(usage.external),
      arrayBuffersMb: mb(usage.arrayBuffers),
      loopDelayMaxMs: Math.round(loop.max / 1e6),
      gcPauseMs: Math.round(gcPauseMs),
      gcMaxPauseMs: Math.round(gcMaxPauseMs),
      cpuMs: Math.round((used.user + used.system) / 1000),
    };
    loop.reset();
    gcPauseMs = 0;
    gcMaxPauseMs = 0;
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  setInterval(write, everyMs).unref();
  write();

  const settledEveryMs = Number(process.env['SOAK_PROBE_SETTLED_EVERY_MS'] ?? '0');
  const collect = (globalThis as { gc?: () => void }).gc;
  if (settledEveryMs > 0 && collect) {
    setInterval(() => {
      const started = performance.now();
      collect();
      const usage = process.memoryUsage();
      const line = {
        kind: 'settled',
        at: Date.now(),
        rssMb: mb(usage.rss),
        heapTotalMb: mb(usage.heapTotal),
        heapUsedMb: mb(usage.heapUsed),
        externalMb: mb(usage.external),
        arrayBuffersMb: mb(usage.arrayBuffers),
        collectMs: Math.round(performance.now() - started),
        // Where V8's reserved heap is: each space's size against what lives in it.
        spacesMb: Object.fromEntries(
          getHeapSpaceStatistics().map((space) => [
            space.space_name,
            { size: mb(space.space_size), used: mb(space.space_used_size) },
          ]),
        ),
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    }, settledEveryMs).unref();
  }
}
