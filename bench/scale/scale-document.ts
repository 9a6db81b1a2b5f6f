/**
 * docs/SCALE.md's generated parts (issue 35): the inputs the simulation ran on, the capacity table
 * (1k, 10k and 50k events/s; single publishes and batches of 10; 1, 10 and 100 subscribers) and the
 * one-hour run at 10k events/s with a 20k/s burst of 60 s. Pure: the document's sections are
 * exactly this module's output for the committed bench/results (test/unit/scale-document.test.ts).
 */
import { ATTEMPT_SHARDS } from '../../functions/aws/delivery-table-items.js';
import { withMarkedSection } from '../../lib/documents/marked-sections.js';
import type { ResultFile } from '../cost/model.js';
import { ASSUMED_LATENCY_MS, measuredModes, QUOTAS, type MeasuredMode } from './inputs.js';
import { DEFAULT_LIMITS, simulate, type Limits, type RunResult } from './simulation.js';

export const SEED = 35;

/** How many partitions one subscriber's delivery state (its attempt history) is written over. */
export const DELIVERY_STATE_SHARDS = ATTEMPT_SHARDS;

/** What a deployment for 10k events/s sets: quota requests, provisioned pollers, pre-warmed tables. */
export const RAISED_LIMITS: Limits = {
  ingestRoute: { rateLimit: 30_000, burstLimit: 30_000 },
  ingestReservedConcurrency: 2_000,
  apiRequestsPerSecond: 30_000,
  lambdaConcurrency: 10_000,
  eventSourceMode: 'provisioned',
  minimumConcurrency: 50,
  tableWriteUnits: 40_000,
};

export function hourRuns(files: Readonly<Record<string, ResultFile>>): RunResult[] {
  const modes = measuredModes(files);
  const run = (mode: MeasuredMode, limits: Limits, name: string) =>
    simulate({
      name,
      mode,
      subscribers: 1,
      eventsPerSecond: 10_000,
      burst: { eventsPerSecond: 20_000, fromSecond: 1_800, seconds: 60 },
      seconds: 3_600,
      limits,
      deliveryStateShards: DELIVERY_STATE_SHARDS,
      seed: SEED,
    });
  return [
    run(modes.single, DEFAULT_LIMITS, 'single publishes, default quotas'),
    run(modes.batch10, DEFAULT_LIMITS, 'batches of 10, default quotas'),
    run(modes.single, RAISED_LIMITS, 'single publishes, raised'),
    run(modes.batch10, RAISED_LIMITS, 'batches of 10, raised'),
  ];
}

/** The capacity table's limits: Koerier's own out of the way (route throttle raised, no ingest reservation), AWS's at their defaults. */
export const CAPACITY_LIMITS: Limits = {
  ...DEFAULT_LIMITS,
  ingestRoute: { rateLimit: 50_000, burstLimit: 50_000 },
  ingestReservedConcurrency: 0,
};

export function capacityRuns(files: Readonly<Record<string, ResultFile>>): RunResult[] {
  const modes = measuredModes(files);
  const runs: RunResult[] = [];
  for (const eventsPerSecond of [1_000, 10_000, 50_000])
    for (const mode of [modes.single, modes.batch10])
      for (const subscribers of [1, 10, 100])
        runs.push(
          simulate({
            name: `${eventsPerSecond}/s ${mode.batch === 1 ? 'single' : 'batch 10'} ${subscribers}`,
            mode,
            subscribers,
            eventsPerSecond,
            seconds: 600,
            limits: CAPACITY_LIMITS,
            deliveryStateShards: DELIVERY_STATE_SHARDS,
            seed: SEED,
          }),
        );
  return runs;
}

const n = (value: number) => Math.round(value).toLocaleString('en-US');
const firstBreaks = (run: RunResult) =>
  run.breaks.length === 0
    ? 'nothing'
    : run.breaks
        .slice(0, 2)
        .map((b) => `${b.what} (s ${b.second})`)
        .join('; then ');

export function renderInputs(files: Readonly<Record<string, ResultFile>>): string {
  const modes = measuredModes(files);
  const rows = [
    '| input | value | source |',
    '|---|---|---|',
    ...Object.values(QUOTAS).map(
      (quota) =>
        `| ${quota.what} | ${n(quota.value)} | [${new URL(quota.source).pathname.split('/').pop()}](${quota.source}) |`,
    ),
    ...Object.entries(ASSUMED_LATENCY_MS).map(
      ([service, ms]) => `| ${service} round trip per operation an invocation calls | ${ms} ms | assumed |`,
    ),
  ];
  const stages = [
    '| measured (bench/results) | ingest ms/invocation | router ms/invocation (10 records) | delivery ms/invocation | write units per event: ingest + router + delivery | $ per million events |',
    '|---|---|---|---|---|---|',
  ];
  for (const mode of [modes.single, modes.batch10])
    stages.push(
      `| ${mode.scenario} (${mode.measuredAt.slice(0, 10)}), ${mode.batch === 1 ? 'single publishes' : 'batches of 10'} | ${mode.ingest.msPerInvocation.toFixed(1)} | ${mode.router.msPerInvocation.toFixed(1)} | ${mode.delivery.msPerInvocation.toFixed(1)} | ${(mode.ingest.writeUnitsPerRecord / mode.batch).toFixed(2)} + ${mode.router.writeUnitsPerRecord.toFixed(2)} + ${mode.delivery.writeUnitsPerRecord.toFixed(2)} | ${mode.dollarsPerMillionEvents.toFixed(2)} |`,
    );
  return `${rows.join('\n')}\n\n${stages.join('\n')}\n`;
}

export function renderCapacity(files: Readonly<Record<string, ResultFile>>): string {
  const rows = [
    '| events/s | publishes | subscribers | API requests/s | Lambda concurrency (ingest + router + delivery) | idempotency / deliveries table WCU | one subscriber’s partition WCU | backlog after 10 min | breaks first (and next) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const run of capacityRuns(files)) {
    const { config, peakConcurrency: c } = run;
    rows.push(
      `| ${n(config.eventsPerSecond)} | ${config.mode.batch === 1 ? 'single' : 'batches of 10'} | ${config.subscribers} | ${n(config.eventsPerSecond / config.mode.batch)} | ${n(c.total)} (${n(c.ingest)} + ${n(c.router)} + ${n(c.delivery)}) | ${n(run.peakTableWriteUnits.idempotency)} / ${n(run.peakTableWriteUnits.deliveries)} | ${n(run.peakPartitionWriteUnits)} | ${n(run.backlogAtEnd)} | ${firstBreaks(run)} |`,
    );
  }
  return `${rows.join('\n')}\n`;
}

export function renderHour(files: Readonly<Record<string, ResultFile>>): string {
  const runs = hourRuns(files);
  const rows = [
    '| run | accepted | refused (429 / Lambda / table) | peak inbound backlog | peak delivery backlog | drained after the burst | backlog at the end | peak concurrency (total: ingest, router, delivery) | peak WCU idempotency / deliveries | cost per hour |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const run of runs) {
    const c = run.peakConcurrency;
    rows.push(
      `| ${run.config.name} | ${n(run.accepted)} of ${n(run.offered)} | ${n(run.throttledByApi)} / ${n(run.refusedByLambda)} / ${n(run.refusedByTable)} | ${n(run.peakInboundBacklog.messages)} (s ${run.peakInboundBacklog.second}) | ${n(run.peakDeliveryBacklog.messages)} (s ${run.peakDeliveryBacklog.second}) | ${run.drainedAfterBurstSeconds === undefined ? 'not within the hour' : `${run.drainedAfterBurstSeconds} s`} | ${n(run.backlogAtEnd)} | ${n(c.total)}: ${n(c.ingest)}, ${n(c.router)}, ${n(c.delivery)} | ${n(run.peakTableWriteUnits.idempotency)} / ${n(run.peakTableWriteUnits.deliveries)} | $${run.costPerHour.toFixed(2)} |`,
    );
  }
  const breaks = runs.map(
    (run) =>
      `- **${run.config.name}**: ${run.breaks.length === 0 ? 'nothing breaks.' : run.breaks.map((b) => `s ${b.second}: ${b.what}`).join('; ')}`,
  );
  return `${rows.join('\n')}\n\nWhere each run breaks, in order (second of the hour: limit reached):\n\n${breaks.join('\n')}\n`;
}

/** docs/SCALE.md with its three generated sections made anew from `files`. */
export function renderScaleDocument(document: string, files: Readonly<Record<string, ResultFile>>): string {
  let out = withMarkedSection(document, 'scale-inputs', renderInputs(files));
  out = withMarkedSection(out, 'scale-capacity', renderCapacity(files));
  return withMarkedSection(out, 'scale-hour', renderHour(files));
}
