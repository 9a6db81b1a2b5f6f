/**
 * For the compaction tests (issue 15): opens a journalled queue on the state directory named in
 * argv[2], sends a backlog, consumes some of it and starts a compaction that stops for good at the
 * stage named in the plan (argv[3]). There it consumes and sends more, as a host does while a
 * compaction runs, prints `paused <stage>` and waits to be killed with SIGKILL.
 */
import type { CompactionStage } from '../../local/sqs-journal.js';
import { labels, openJournalledQueue } from './local-sqs-journal-harness.js';

export interface CompactionKillPlan {
  readonly backlog: number;
  readonly consumedBefore: number;
  readonly pauseAt: CompactionStage;
  readonly consumedWhilePaused: number;
  readonly sentWhilePaused: number;
}

// Alive until killed; the emulator's own timers do not hold the process.
setInterval(() => undefined, 60_000);
const [stateDir, planText] = process.argv.slice(2);
const plan = JSON.parse(planText!) as CompactionKillPlan;
const consumed: string[] = [];
const target = openJournalledQueue(stateDir!, {
  onCompactionStage: async (stage) => {
    if (stage !== plan.pauseAt) return;
    consumed.push(...(await target.consume(plan.consumedWhilePaused)));
    target.send(labels('during', plan.sentWhilePaused));
    process.stdout.write(`${JSON.stringify({ paused: stage, consumed })}\n`);
    await new Promise(() => undefined);
  },
});
target.send(labels('backlog', plan.backlog));
consumed.push(...(await target.consume(plan.consumedBefore)));
void target.journal.compact();
