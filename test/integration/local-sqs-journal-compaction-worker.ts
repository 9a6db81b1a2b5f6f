/**
 * For the compaction tests (issue 15): opens a journalled queue on the state directory named in
 * argv[2], sends a backlog, consumes some of it and starts a compaction (plan in argv[3]). With a
 * `pauseAt` stage the compaction stops there for good; without one it runs on. Either way the
 * worker then consumes and sends more, as a host does while a compaction runs, prints what it
 * consumed as one JSON line and waits to be killed with SIGKILL.
 */
import type { CompactionStage } from '../../local/sqs-journal.js';
import { labels, openJournalledQueue } from './local-sqs-journal-harness.js';

export interface CompactionKillPlan {
  readonly backlog: number;
  readonly consumedBefore: number;
  readonly pauseAt?: CompactionStage;
  readonly consumedDuring: number;
  readonly sentDuring: number;
}

export interface CompactionKillReport {
  /** The stage the compaction stopped at, or `running` when it was not stopped. */
  readonly at: CompactionStage | 'running';
  readonly consumed: readonly string[];
}

// Alive until killed; the emulator's own timers do not hold the process.
setInterval(() => undefined, 60_000);
const [stateDir, planText] = process.argv.slice(2);
const plan = JSON.parse(planText!) as CompactionKillPlan;
const consumed: string[] = [];
const whileCompacting = async (at: CompactionKillReport['at']) => {
  consumed.push(...(await target.consume(plan.consumedDuring)));
  target.send(labels('during', plan.sentDuring));
  process.stdout.write(`${JSON.stringify({ at, consumed } satisfies CompactionKillReport)}\n`);
};
const target = openJournalledQueue(stateDir!, {
  onCompactionStage: async (stage) => {
    if (stage !== plan.pauseAt) return;
    await whileCompacting(stage);
    await new Promise(() => undefined);
  },
});
target.send(labels('backlog', plan.backlog));
consumed.push(...(await target.consume(plan.consumedBefore)));
void target.journal.compact();
if (plan.pauseAt === undefined) await whileCompacting('running');
