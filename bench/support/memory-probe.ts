/**
 * Loaded into the soaked host with `--import` (bench/soak.ts): every few seconds it appends one JSON
 * line to the file named by KOERIER_SOAK_MEMORY_FILE with
 *
 * - the host's `process.memoryUsage()` split (rss, heapTotal, heapUsed, external, arrayBuffers), so
 *   the soak can tell a growing JavaScript heap from growing native memory (LevelDB's buffers,
 *   Buffers) — the RSS alone cannot;
 * - the longest event-loop stall and the garbage collector's pauses since the previous line, so a
 *   latency spike can be laid against what the host's one thread was doing.
 *
 * Nothing of the host is changed; without the variable the probe does nothing.
 */
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const file = process.env['KOERIER_SOAK_MEMORY_FILE'];
const everyMs = Number(process.env['KOERIER_SOAK_MEMORY_EVERY_MS'] ?? '5000');

if (file) {
  const mb = (bytes: number) => Math.round(bytes / 104857.6) / 10;
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
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
    };
    loop.reset();
    gcPauseMs = 0;
    gcMaxPauseMs = 0;
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  setInterval(write, everyMs).unref();
  write();
}
