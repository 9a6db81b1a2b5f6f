/**
 * How long the laptop SQS journal's compaction holds the host's one thread (issue 15,
 * local/sqs-journal.ts). A queue of the local-aws-sqs emulator, journalled to a scratch directory,
 * is filled with a backlog (MESSAGES messages of 600-byte bodies, about what the ingest bench
 * leaves in the inbound queue), then compacted COMPACTIONS times while a message is sent every
 * millisecond, as a host's requests would be, and the event loop's delay is measured
 * (perf_hooks.monitorEventLoopDelay, 1 ms resolution) during the compactions only. Two modes in one
 * run, each in a process of its own: `synchronous`, the compaction as it was (serialised, written
 * and flushed in one go, the baseline), and `sliced`, as it is now. Run: `npm run bench -- journal`
 * (`BENCH_JOURNAL_MESSAGES` sets MESSAGES).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createRequestHandler } from 'local-aws-sqs';
import { openSqsJournal } from '../local/sqs-journal.js';

const MESSAGES = Number(process.env['BENCH_JOURNAL_MESSAGES'] ?? 100_000);
const COMPACTIONS = 3;
const BODY_BYTES = 600;
const FILL_BATCH = 1000;

const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function measure(mode: Mode) {
  const directory = await mkdtemp(join(tmpdir(), 'koerier-bench-journal-'));
  try {
    const { service } = createRequestHandler({
      port: 0,
      emulateQueueCreationLifecycle: false,
      queues: [{ QueueName: 'inbound' }],
    });
    const journal = openSqsJournal(directory, service, () => undefined, {
      synchronousCompaction: mode === 'synchronous',
    });
    journal.watchNewQueues();
    const queue = service.Queues[0]!;
    let sent = 0;
    const send = () => queue.setRecord({ MessageBody: `${String(sent++).padStart(10, '0')} `.padEnd(BODY_BYTES, 'x') });

    const fillStarted = performance.now();
    while (sent < MESSAGES) {
      for (let index = 0; index < FILL_BATCH && sent < MESSAGES; index++) send();
      await nextTurn();
    }
    // A compaction the fill set off may still run; this one starts after it.
    await journal.compact();
    const fillMs = performance.now() - fillStarted;
    await sleep(500);

    // One monitor per compaction: a monitor enabled again counts the time it was off as delay.
    const delays: { max: number; p99: number; p50: number }[] = [];
    const durations: number[] = [];
    const stalls: number[] = [];
    // Times the kernel took the CPU away from this process during the compactions: on two shared
    // cores under load, a stall can be another process's turn rather than this one's work.
    let preempted = 0;
    const sentBefore = sent;
    const ms = (nanoseconds: number) => round(nanoseconds / 1e6);
    for (let round = 0; round < COMPACTIONS; round++) {
      // The longest gap between two runs of a 1 ms timer that also sends a message: what a request waits at worst.
      let last = performance.now();
      let longest = 0;
      const traffic = setInterval(() => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
        send();
      }, 1);
      const monitor = monitorEventLoopDelay({ resolution: 1 });
      monitor.enable();
      // Both timers running before the compaction starts, as with a host that serves.
      await sleep(20);
      const switchesBefore = process.resourceUsage().involuntaryContextSwitches;
      const started = performance.now();
      await journal.compact();
      durations.push(performance.now() - started);
      // A little longer, so that a stall at the very end of the compaction is seen.
      await sleep(20);
      monitor.disable();
      delays.push({ max: ms(monitor.max), p99: ms(monitor.percentile(99)), p50: ms(monitor.percentile(50)) });
      clearInterval(traffic);
      stalls.push(longest);
      preempted += process.resourceUsage().involuntaryContextSwitches - switchesBefore;
      await sleep(300);
    }
    const snapshotBytes = (await stat(join(directory, 'snapshot.json'))).size;
    journal.close();
    return {
      fillMs: round(fillMs, 0),
      snapshotMB: round(snapshotBytes / 1024 / 1024),
      compactionMs: durations.map((value) => round(value)),
      longestStallMs: round(Math.max(...stalls)),
      longestStallPerCompactionMs: stalls.map((value) => round(value)),
      loopDelayMs: {
        max: Math.max(...delays.map((d) => d.max)),
        p99: Math.max(...delays.map((d) => d.p99)),
        perCompaction: delays,
      },
      sentDuringCompactions: sent - sentBefore,
      involuntaryContextSwitches: preempted,
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

type Mode = 'synchronous' | 'sliced';
const MODE_FLAG = '--journal-bench-mode';

/** Each mode in a process of its own, so that neither inherits the other's 100k-message heap and its collections. */
function measureInChild(mode: Mode): Promise<Awaited<ReturnType<typeof measure>>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), MODE_FLAG, mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(output) as Awaited<ReturnType<typeof measure>>)
        : reject(new Error(`journal bench ${mode}: exit ${code}`)),
    );
  });
}

export async function run(): Promise<Record<string, unknown>> {
  const loadBefore = loadavg()[0] ?? 0;
  const synchronous = await measureInChild('synchronous');
  const sliced = await measureInChild('sliced');
  return {
    messages: MESSAGES,
    bodyBytes: BODY_BYTES,
    compactionsPerMode: COMPACTIONS,
    load: { before: round(loadBefore, 2), after: round(loadavg()[0] ?? 0, 2) },
    synchronous,
    sliced,
  };
}

if (process.argv[2] === MODE_FLAG) {
  process.stdout.write(JSON.stringify(await measure(process.argv[3] as Mode)));
  process.exit(0);
}
