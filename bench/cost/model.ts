/**
 * The cost model (issue 15, item 5): turns the usage the benchmarks recorded (`costScenarios` in
 * bench/results/*.json, written by bench/support/aws-usage.ts) and the deployment's shape
 * (functions/config/resources.ts: memory, queue triggers, retention) into dollars per million events at
 * the prices below. `renderCostDocument` is pure: docs/COST.md is exactly its output for the
 * committed results (test/unit/cost-document.test.ts), so no figure in it is typed by hand.
 */
import { buckets, functions, type FunctionSpec } from '../../functions/config/resources.js';
import type { CostScenario, StageUsage } from '../support/aws-usage.js';

/** On-demand list prices, eu-west-1 (Europe, Ireland), no free tier, as read on `date`. */
export const PRICES = {
  region: 'eu-west-1',
  date: '2026-11-23',
  lambda: { perMillionRequests: 0.2, perGbSecondArm64: 0.0000133334 },
  apiGatewayHttp: { perMillionRequests: 1.11, meteredBytes: 512 * 1024 },
  sqsStandard: { perMillionRequests: 0.4 },
  dynamodbOnDemand: { perMillionWriteUnits: 0.7068, perMillionReadUnits: 0.1413 },
  s3Standard: { perThousandPut: 0.005, perThousandGet: 0.0004, perGbMonth: 0.023 },
  kms: { perKeyMonth: 1.0 },
  /** Added for the idle month (issue 31 item 3): standard-resolution alarms, dashboards, Logs Standard ingestion. */
  cloudWatch: { perAlarmMonth: 0.1, perDashboardMonth: 3.0, logsPerGbIngested: 0.57 },
  eventBridge: { perMillionEvents: 1.0, perMillionApiDestinationCalls: 0.2, maxEventBytes: 256 * 1024 },
} as const;

/**
 * What the laptop cannot show, stated rather than measured: a Lambda SQS event source keeps
 * pollers long-polling an idle queue (about 5 pollers, one ReceiveMessage per 20 s each), and per
 * invocation it spends one ReceiveMessage and one DeleteMessageBatch.
 */
export const ASSUMPTIONS = {
  idlePollersPerQueue: 5,
  longPollSeconds: 20,
  eventSourceRequestsPerInvocation: 2,
  secondsPerMonth: 30 * 24 * 3600,
} as const;

export interface ResultFile {
  readonly benchmark?: string;
  readonly measuredAt?: string;
  readonly loadAverageAtStart?: number;
  readonly machine?: { readonly node?: string };
  readonly costScenarios?: Record<string, CostScenario>;
}

export type MeasuredScenario = CostScenario & {
  readonly from: string;
  readonly measuredAt: string;
  readonly loadAverage: number | undefined;
};

/** Every scenario the result files hold; the newest measurement of a name wins. */
export function collectScenarios(files: Readonly<Record<string, ResultFile>>): Record<string, MeasuredScenario> {
  const found: Record<string, MeasuredScenario> = {};
  for (const [file, result] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    for (const [name, scenario] of Object.entries(result.costScenarios ?? {})) {
      const measuredAt = result.measuredAt ?? '';
      if (!found[name] || found[name].measuredAt < measuredAt)
        found[name] = { ...scenario, from: file, measuredAt, loadAverage: result.loadAverageAtStart };
    }
  }
  return found;
}

export interface Dollars {
  lambdaRequests: number;
  lambdaDuration: number;
  apiGateway: number;
  sqs: number;
  dynamodb: number;
  s3: number;
}

const spec = (stage: string): FunctionSpec | undefined => (functions as Record<string, FunctionSpec>)[stage];
const isHttp = (stage: string) => Boolean(spec(stage)?.routes ?? spec(stage)?.defaultRoute);
const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);
const apiRequestsFor = (stage: string, dataBytes: number) =>
  stage === 'ingest' || stage === 'payloads'
    ? Math.max(1, Math.ceil((dataBytes + 1024) / PRICES.apiGatewayHttp.meteredBytes))
    : 1;

/** Dollars per million events for one scenario, `naive` rewriting it as one request per item and one invocation per record. */
export function dollarsPerMillion(scenario: CostScenario, naive = false): Dollars {
  const total: Dollars = { lambdaRequests: 0, lambdaDuration: 0, apiGateway: 0, sqs: 0, dynamodb: 0, s3: 0 };
  const perEvent = 1 / scenario.events;
  const million = 1_000_000;
  for (const [stage, usage] of Object.entries(scenario.stages) as [string, StageUsage][]) {
    const fn = spec(stage);
    if (!fn || usage.invocations === 0) continue;
    const queueTriggered = fn.queueTrigger !== undefined;
    const invocations = naive && queueTriggered ? usage.records : usage.invocations;
    // Lambda bills each invocation's duration rounded up to the millisecond.
    const msPerInvocation = Math.ceil(usage.handlerMs / invocations);
    total.lambdaRequests += invocations * perEvent * million * (PRICES.lambda.perMillionRequests / million);
    total.lambdaDuration +=
      invocations *
      perEvent *
      million *
      (msPerInvocation / 1000) *
      (fn.memoryMb / 1024) *
      PRICES.lambda.perGbSecondArm64;
    if (isHttp(stage))
      total.apiGateway +=
        usage.invocations *
        apiRequestsFor(stage, scenario.dataBytes) *
        perEvent *
        PRICES.apiGatewayHttp.perMillionRequests;
    const sqsRequests =
      usage.units.sqs64KiBChunks +
      // Naive: every entry a batch carried would have been a request of its own.
      (naive ? sum(pick(usage.items, 'sqs:')) - sum(pick(usage.requests, 'sqs:')) : 0) +
      (queueTriggered ? invocations * ASSUMPTIONS.eventSourceRequestsPerInvocation : 0);
    total.sqs += sqsRequests * perEvent * PRICES.sqsStandard.perMillionRequests;
    const writeUnits = usage.units.dynamodbWriteUnits;
    const readUnits = usage.units.dynamodbReadUnits;
    total.dynamodb +=
      (writeUnits * PRICES.dynamodbOnDemand.perMillionWriteUnits +
        readUnits * PRICES.dynamodbOnDemand.perMillionReadUnits) *
      perEvent;
    const retentionMonths = buckets.payloads.objectRetentionSeconds / ASSUMPTIONS.secondsPerMonth;
    total.s3 +=
      (usage.units.s3PutClass * PRICES.s3Standard.perThousandPut * 1000 +
        usage.units.s3GetClass * PRICES.s3Standard.perThousandGet * 1000 +
        (usage.units.s3BytesWritten / 1024 ** 3) * retentionMonths * PRICES.s3Standard.perGbMonth * million) *
      perEvent;
  }
  return total;
}

function pick(values: Record<string, number>, prefix: string): Record<string, number> {
  return Object.fromEntries(Object.entries(values).filter(([key]) => key.startsWith(prefix)));
}

export const totalOf = (dollars: Dollars) => sum(dollars as unknown as Record<string, number>);

/**
 * EventBridge API destinations for the same events: PutEvents per 64 KiB chunk, one API destination call per push target, the same
 * HTTP API in front, taking as many requests per event as Koerier's ingest did (a batch of 10 is one request, and one PutEvents of 10 entries).
 */
export function eventBridgePerMillion(scenario: CostScenario, pushTargets: number): number | undefined {
  if (scenario.dataBytes > PRICES.eventBridge.maxEventBytes) return undefined;
  const chunks = Math.max(1, Math.ceil((scenario.dataBytes + 1024) / 65_536));
  const ingest = scenario.stages['ingest'];
  const apiRequestsPerEvent = ingest && ingest.invocations > 0 ? ingest.invocations / scenario.events : 1;
  return (
    apiRequestsPerEvent * PRICES.apiGatewayHttp.perMillionRequests +
    chunks * PRICES.eventBridge.perMillionEvents +
    pushTargets * PRICES.eventBridge.perMillionApiDestinationCalls
  );
}

/**
 * What an idle month costs on AWS's side of the bill: the event sources' long polling, per queue
 * with a trigger, at ASSUMPTIONS' pollers. The other idle charges (keys, alarms, dashboard) and the
 * log volume are priced from the synthesized template by lib/documents/idle-month.ts.
 */
export function idlePollingPerMonth(queuesWithTrigger: number): { requests: number; dollars: number } {
  const requests =
    queuesWithTrigger * ASSUMPTIONS.idlePollersPerQueue * (ASSUMPTIONS.secondsPerMonth / ASSUMPTIONS.longPollSeconds);
  return { requests, dollars: (requests / 1_000_000) * PRICES.sqsStandard.perMillionRequests };
}

export const usd = (value: number | undefined) =>
  value === undefined ? 'n/a' : `$${value.toFixed(value < 0.1 && value > 0 ? 4 : 2)}`;
const num = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));

/** Push targets per scenario name (`push3` → 3, `push1Batch10` → 1), for the EventBridge comparison. */
const pushTargetsOf = (name: string) => Number(/^push(\d+)/.exec(name)?.[1] ?? (name.startsWith('claimCheck') ? 1 : 0));

/**
 * `idleMonth` is the idle-month section as it stands in docs/COST.md: `npm run docs:generate`
 * writes it from the synthesized template (lib/documents/idle-month.ts), and this generator keeps it.
 */
export function renderCostDocument(files: Readonly<Record<string, ResultFile>>, idleMonth: string): string {
  const scenarios = collectScenarios(files);
  const lines: string[] = [];
  const out = (...text: string[]) => lines.push(...text);
  out(
    '# What Koerier costs per event',
    '',
    '<!-- Generated by `npm run cost` (bench/cost/model.ts) from bench/results/*.json; do not edit by hand: test/unit/cost-document.test.ts fails when this file and the results disagree. -->',
    '',
    'Dollars per million events, from what the benchmarks **measured** on the laptop host (bench/cost.ts records, per function, every AWS request by service and operation, its billing units, the invocations and the handler time) at the list prices below. The request and unit counts carry over to AWS as they are; handler times are the laptop’s, where the emulators answer in-process (AWS answers over the network, in a few ms per request), so the Lambda duration lines are a floor. Not counted per event: CloudWatch Logs (priced per event in the idle month below) and metrics, data transfer out to subscribers, KMS requests (credentials are decrypted once per container) and the free tiers.',
    '',
    `## Prices (${PRICES.region}, on-demand, read ${PRICES.date})`,
    '',
    '| item | price |',
    '|---|---|',
    `| Lambda requests | $${PRICES.lambda.perMillionRequests} per million |`,
    `| Lambda duration, arm64 | $${PRICES.lambda.perGbSecondArm64} per GB-second, billed per ms |`,
    `| API Gateway HTTP API | $${PRICES.apiGatewayHttp.perMillionRequests} per million, metered per 512 KB |`,
    `| SQS standard | $${PRICES.sqsStandard.perMillionRequests} per million requests, each 64 KB chunk of payload one request |`,
    `| DynamoDB on-demand | $${PRICES.dynamodbOnDemand.perMillionWriteUnits} per million write units, $${PRICES.dynamodbOnDemand.perMillionReadUnits} per million read units |`,
    `| S3 Standard | $${PRICES.s3Standard.perThousandPut} per 1,000 PUT, $${PRICES.s3Standard.perThousandGet} per 1,000 GET, $${PRICES.s3Standard.perGbMonth} per GB-month |`,
    `| KMS | $${PRICES.kms.perKeyMonth} per key-month |`,
    `| CloudWatch (added 2026-11-29 for the idle month, not re-read with the others) | $${PRICES.cloudWatch.perAlarmMonth} per standard-resolution alarm-month, $${PRICES.cloudWatch.perDashboardMonth} per dashboard-month, Logs $${PRICES.cloudWatch.logsPerGbIngested} per GB ingested |`,
    `| EventBridge | $${PRICES.eventBridge.perMillionEvents} per million events (64 KB chunks), API destinations $${PRICES.eventBridge.perMillionApiDestinationCalls} per million calls |`,
    '',
    'Modelled, not measured (the laptop has no Lambda event source): each invocation of a queue-triggered function costs the event source one ReceiveMessage and one DeleteMessageBatch; an idle queue with a trigger is long-polled by about 5 pollers every 20 s.',
    '',
    '## Per million events',
    '',
    '| scenario | Koerier | of which Lambda duration | naive design | EventBridge API destinations |',
    '|---|---|---|---|---|',
  );
  const names = Object.keys(scenarios);
  for (const name of names) {
    const scenario = scenarios[name]!;
    out(
      `| ${scenario.description} | ${usd(totalOf(dollarsPerMillion(scenario)))} | ${usd(dollarsPerMillion(scenario).lambdaDuration)} | ${usd(totalOf(dollarsPerMillion(scenario, true)))} | ${name === 'pull' ? 'n/a (no pull)' : usd(eventBridgePerMillion(scenario, pushTargetsOf(name)))} |`,
    );
  }
  out(
    '',
    'Naive design: the same work with one AWS request per item (no SendMessageBatch, BatchWriteItem or BatchGetItem) and one Lambda invocation per queue record, each billed the same handler time per record; derived from the same measurements, not run. EventBridge: the same HTTP API in front, PutEvents per event (per 64 KB chunk), one API destination call per push target; it has no pull and takes no event over 256 KB.',
    '',
    '## An idle month',
    '',
    '<!-- idle-month:start -->',
    `${idleMonth}<!-- idle-month:end -->`,
    '',
    '## Where the money goes',
  );
  for (const name of names) {
    const scenario = scenarios[name]!;
    const dollars = dollarsPerMillion(scenario);
    out(
      '',
      `### ${scenario.description}`,
      '',
      `${scenario.events} events of ${scenario.dataBytes.toLocaleString('en-US')} bytes of data; measured ${scenario.measuredAt.slice(0, 10)} (bench/results/${scenario.from}, machine load average ${scenario.loadAverage ?? 'not recorded'} on 2 cores).`,
      '',
      `Per million events: Lambda requests ${usd(dollars.lambdaRequests)}, Lambda duration ${usd(dollars.lambdaDuration)}, API Gateway ${usd(dollars.apiGateway)}, SQS ${usd(dollars.sqs)}, DynamoDB ${usd(dollars.dynamodb)}, S3 ${usd(dollars.s3)}.`,
      '',
      '| function | invocations per event | records per invocation | handler ms per invocation | AWS requests per event (items) | units per event |',
      '|---|---|---|---|---|---|',
    );
    for (const [stage, usage] of Object.entries(scenario.stages).sort(([a], [b]) => a.localeCompare(b))) {
      const requests = Object.entries(usage.requests)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(
          ([key, count]) =>
            `${key} ${num(count / scenario.events)}${usage.items[key] !== count ? ` (${num((usage.items[key] ?? 0) / scenario.events)})` : ''}`,
        )
        .join(', ');
      const units = [
        ['SQS 64 KB', usage.units.sqs64KiBChunks],
        ['DynamoDB WRU', usage.units.dynamodbWriteUnits],
        ['DynamoDB RRU', usage.units.dynamodbReadUnits],
        ['S3 PUT', usage.units.s3PutClass],
        ['S3 GET', usage.units.s3GetClass],
      ]
        .filter(([, value]) => (value as number) > 0)
        .map(([label, value]) => `${label} ${num((value as number) / scenario.events)}`)
        .join(', ');
      const invocations = usage.invocations === 0 ? '—' : num(usage.invocations / scenario.events);
      const records = usage.invocations === 0 ? '—' : num(usage.records / usage.invocations);
      const ms = usage.invocations === 0 ? '—' : num(usage.handlerMs / usage.invocations);
      out(`| ${stage} | ${invocations} | ${records} | ${ms} | ${requests || '—'} | ${units || '—'} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
