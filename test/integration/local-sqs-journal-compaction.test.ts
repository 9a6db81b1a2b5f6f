/**
 * issue 15: the laptop SQS journal compacts while the host serves without holding the thread, and
 * keeps every guarantee of local/sqs-journal.ts's header while it does: a kill -9 at any stage of
 * a compaction loses no message and duplicates none, messages sent and consumed meanwhile are
 * kept, and a clean stop during a compaction leaves a final snapshot nothing overwrites later.
 * Real emulator (local-aws-sqs), real files, and a real child process for the kills.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompactionStage, SqsJournal } from '../../local/sqs-journal.js';
import type { CompactionKillPlan, CompactionKillReport } from './local-sqs-journal-compaction-worker.js';
import { keptMessages, labels, openJournalledQueue } from './local-sqs-journal-harness.js';

const WORKER = fileURLToPath(new URL('./local-sqs-journal-compaction-worker.ts', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
/** Enough that the snapshot is written in several slices (about 4 MB). */
const BACKLOG = 6000;
const STAGES: readonly CompactionStage[] = ['started', 'writing', 'flushed', 'renamed'];

let stateDir: string;
const opened: SqsJournal[] = [];

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'koerier-sqs-compaction-'));
});
afterEach(async () => {
  opened.splice(0).forEach((journal) => journal.close());
  await rm(stateDir, { recursive: true, force: true });
});

function open(options: Parameters<typeof openJournalledQueue>[1] = {}) {
  const target = openJournalledQueue(stateDir, options);
  opened.push(target.journal);
  return target;
}

/** Compared as a digest: a deep comparison of two 4 MB buffers takes vitest half a minute. */
const snapshotDigest = async () =>
  createHash('sha256')
    .update(await readFile(join(stateDir, 'sqs', 'snapshot.json')))
    .digest('hex');
const files = async () => (await readdir(join(stateDir, 'sqs'))).sort();
/** A compaction's temporary file, or the second name it gives the snapshot it replaces. */
const isCompactionsOwn = (name: string) => /^snapshot\.json\.\d+\.(tmp|old)$/.test(name);
const sorted = (list: readonly string[]) => [...list].sort();
/** What a restart must restore: the backlog less what was consumed, plus what was sent during the compaction. */
const expected = (consumed: readonly string[], sentDuring: number, backlog = BACKLOG) => {
  const gone = new Set(consumed);
  return sorted([...labels('backlog', backlog).filter((label) => !gone.has(label)), ...labels('during', sentDuring)]);
};

/** Starts the worker on the plan; resolves once it reports what it did while the compaction ran. */
async function startWorker(
  plan: CompactionKillPlan,
): Promise<{ report: CompactionKillReport; kill: () => Promise<void> }> {
  const worker = spawn(process.execPath, ['--import', 'tsx', WORKER, stateDir, JSON.stringify(plan)], {
    cwd: REPOSITORY,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    worker.once('exit', (_code, signal) => resolve(signal)),
  );
  const report = await new Promise<CompactionKillReport>((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`the worker exited early (${code})`)));
    let output = '';
    worker.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('\n')) resolve(JSON.parse(output.slice(0, output.indexOf('\n'))) as CompactionKillReport);
    });
  });
  expect(report.consumed).toHaveLength(plan.consumedBefore + plan.consumedDuring);
  return {
    report,
    kill: async () => {
      worker.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
    },
  };
}

/** A restart on the state directory puts back exactly what the worker left: each message once. */
async function expectRestored(consumed: readonly string[], plan: CompactionKillPlan): Promise<void> {
  const restarted = open();
  const want = expected(consumed, plan.sentDuring, plan.backlog);
  expect(restarted.journal.restored['backlog']).toBe(want.length);
  expect(await restarted.held()).toBe(want.length);
  expect(sorted(await restarted.kept())).toEqual(want);
  expect((await files()).filter(isCompactionsOwn)).toEqual([]);
}

/** A compaction stage hook that stops at `stage` until released. */
function gateAt(stage: CompactionStage) {
  let release = () => undefined as void;
  let reach = () => undefined as void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    reached,
    release,
    onCompactionStage: async (current: CompactionStage) => {
      if (current !== stage) return;
      reach();
      await released;
    },
  };
}

describe('issue 15: SQS journal compaction while the host serves', () => {
  it.each(STAGES)(
    'issue 15: a kill -9 while a compaction is at "%s" loses no message and duplicates none, also of those sent and consumed during it',
    async (stage) => {
      const plan: CompactionKillPlan = {
        backlog: BACKLOG,
        consumedBefore: 100,
        pauseAt: stage,
        consumedDuring: 100,
        sentDuring: 50,
      };
      const { report, kill } = await startWorker(plan);
      expect(report.at).toBe(stage);
      // The kill lands where the test says: a half-written or complete temporary file, or a new
      // snapshot whose replaced journals are not removed yet.
      const before = await files();
      if (stage === 'writing' || stage === 'flushed')
        expect(before.filter((name) => name.endsWith('.tmp'))).toHaveLength(1);
      if (stage === 'renamed') expect(before.filter((name) => name.startsWith('journal-'))).toHaveLength(2);
      await kill();

      await expectRestored(report.consumed, plan);
    },
  );

  it('issue 15: a kill -9 while a compaction of a large backlog runs on, unpaused, loses no message and duplicates none', async () => {
    // About 18 MB: the compaction takes a good part of a second, and the kill comes while the
    // worker is still consuming and sending beside it.
    const plan: CompactionKillPlan = { backlog: 4 * BACKLOG, consumedBefore: 100, consumedDuring: 100, sentDuring: 50 };
    const { report, kill } = await startWorker(plan);
    expect(report.at).toBe('running');
    await kill();

    await expectRestored(report.consumed, plan);
  });

  it('issue 15: messages sent and consumed while a compaction runs are kept once it is done, with the new snapshot and only the new journal on disk', async () => {
    // Held before it serialises anything, so that everything below happens while it runs.
    const gate = gateAt('started');
    const first = open({ onCompactionStage: gate.onCompactionStage });
    first.send(labels('backlog', BACKLOG));
    const consumed = await first.consume(100);
    const compaction = first.journal.compact();
    await gate.reached;
    // Still the same compaction: at most one at a time.
    expect(first.journal.compact()).toBe(compaction);
    first.send(labels('during', 50));
    consumed.push(...(await first.consume(100)));
    const received = await first.receive(10);
    gate.release();
    await compaction;
    const snapshot = JSON.parse(await readFile(join(stateDir, 'sqs', 'snapshot.json'), 'utf8')) as {
      generation: number;
    };
    expect(await files()).toEqual([`journal-${String(snapshot.generation).padStart(12, '0')}.jsonl`, 'snapshot.json']);
    // The snapshot is the moment the compaction began: the 100 consumed before and none of those
    // after, and the 10 received meanwhile not received yet (stored messages are replaced, not altered).
    const atCompaction = await keptMessages(stateDir);
    expect(atCompaction.size).toBe(BACKLOG - 100);
    expect(received.map((label) => atCompaction.get(label)?.receiveCount)).toEqual(received.map(() => '0'));
    first.journal.close();

    const restarted = open();
    const want = expected(consumed, 50);
    expect(restarted.journal.restored['backlog']).toBe(want.length);
    expect(await restarted.held()).toBe(want.length);
    expect(sorted(await restarted.kept())).toEqual(want);
    const afterRestart = await keptMessages(stateDir);
    expect(received.map((label) => afterRestart.get(label)?.receiveCount)).toEqual(received.map(() => '1'));
  });

  it.each(STAGES)(
    'issue 15: a clean stop while a compaction is at "%s" leaves a snapshot that restores everything, also what was sent and consumed during it, and no later write changes it',
    async (stage) => {
      const gate = gateAt(stage);
      const first = open({ onCompactionStage: gate.onCompactionStage });
      first.send(labels('backlog', BACKLOG));
      const consumed = await first.consume(100);
      const compaction = first.journal.compact();
      await gate.reached;
      first.send(labels('during', 50));
      consumed.push(...(await first.consume(100)));
      first.journal.close();
      const snapshotAtStop = await snapshotDigest();
      // Less the compaction's own files, which it removes as it gives up.
      const filesAtStop = (await files()).filter((name) => !isCompactionsOwn(name));

      gate.release();
      await compaction;
      expect(await snapshotDigest()).toBe(snapshotAtStop);
      expect(await files()).toEqual(filesAtStop);

      const restarted = open();
      const want = expected(consumed, 50);
      expect(restarted.journal.restored['backlog']).toBe(want.length);
      expect(await restarted.held()).toBe(want.length);
      expect(sorted(await restarted.kept())).toEqual(want);
    },
  );
});
