/**
 * What the scale simulation (./simulation.ts) is fed (issue 35): the AWS quotas that bite, each with
 * the page it was read from; the latencies AWS answers in, which the laptop cannot measure (stated,
 * not measured); and Koerier's own cost per event per stage, as the benchmarks measured it on the
 * laptop host (bench/results/cost*.json, the same figures docs/COST.md is made of).
 */
import type { StageUsage } from '../support/aws-usage.js';
import { collectScenarios, dollarsPerMillion, totalOf, type ResultFile } from '../cost/model.js';

/** A quota, its default and where it is documented (read 2026-11-29). */
export interface Quota {
  readonly value: number;
  readonly what: string;
  readonly source: string;
}

export const QUOTAS = {
  apiRequestsPerSecond: {
    value: 10_000,
    what: 'API Gateway throttle per account and Region, shared by every HTTP, REST and WebSocket API (raisable)',
    source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html',
  },
  apiBurst: {
    value: 5_000,
    what: 'API Gateway token-bucket burst on top of it (set by AWS, not raisable on request)',
    source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html',
  },
  lambdaConcurrency: {
    value: 1_000,
    what: 'Lambda concurrent executions per account and Region, shared by every function (raisable)',
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html',
  },
  lambdaScalingPer10s: {
    value: 1_000,
    what: 'Lambda scaling rate: new execution environments per function every 10 seconds, refilled continuously',
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html',
  },
  sqsPollerStart: {
    value: 5,
    what: 'SQS event source, standard mode: concurrent batches when messages first appear',
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html',
  },
  sqsPollerGrowthPerMinute: {
    value: 300,
    what: 'SQS event source, standard mode: added concurrent batches per minute while messages wait',
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html',
  },
  sqsMaxConcurrentBatches: {
    value: 1_000,
    what: 'SQS event source: concurrent batches one mapping processes at most (standard mode)',
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html',
  },
  provisionedScalingFactor: {
    value: 3,
    what: 'SQS event source, provisioned mode: scales 3 times faster (minimum and maximum pollers set)',
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html',
  },
  partitionWriteUnits: {
    value: 1_000,
    what: 'DynamoDB write units per second one partition serves (a single item or key never more)',
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html',
  },
  partitionReadUnits: {
    value: 3_000,
    what: 'DynamoDB read units per second one partition serves',
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html',
  },
  newTableWriteUnits: {
    value: 4_000,
    what: 'DynamoDB on-demand: write units per second a new table sustains (its warm throughput) before it grows',
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html',
  },
  newTableReadUnits: {
    value: 12_000,
    what: 'DynamoDB on-demand: read units per second a new table sustains before it grows',
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html',
  },
  onDemandPeakGrowth: {
    value: 2,
    what: 'DynamoDB on-demand: a table is not throttled up to twice its previous peak (30-minute window)',
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html',
  },
} as const satisfies Record<string, Quota>;

/**
 * Round trips in AWS, per request, which the laptop's in-process emulators do not have. Assumed
 * (typical single-digit-millisecond DynamoDB, SQS and S3 within a Region), not measured; each
 * operation a stage calls is counted once per invocation, as a batch's items go out together.
 */
export const ASSUMED_LATENCY_MS = { dynamodb: 6, sqs: 10, s3: 30, webhook: 100 } as const;

/** Per stage, what one invocation costs and carries, from one measured scenario. */
export interface StageCost {
  readonly recordsPerInvocation: number;
  /** Laptop handler time plus ASSUMED_LATENCY_MS per operation called. */
  readonly msPerInvocation: number;
  /** Write and read units per record. */
  readonly writeUnitsPerRecord: number;
  readonly readUnitsPerRecord: number;
}

export interface MeasuredMode {
  readonly scenario: string;
  readonly measuredAt: string;
  /** Events per publish request. */
  readonly batch: number;
  readonly ingest: StageCost;
  readonly router: StageCost;
  /** Per delivery (one subscription's copy of an event) with one subscriber: ten deliveries of a batch share one attempt pack. */
  readonly delivery: StageCost;
  /** Per delivery with many subscribers (measured with 10): a batch's deliveries go to different subscriptions. */
  readonly deliveryToMany: StageCost;
  /** Router time added per invocation for each subscriber after the first (its SendMessageBatch), from 1 and 10 subscribers. */
  readonly routerMsPerExtraSubscriber: number;
  /** Dollars per million events of the measured scenario (docs/COST.md). */
  readonly dollarsPerMillionEvents: number;
}

function stageCost(usage: StageUsage, extraMs = 0): StageCost {
  let awsMs = 0;
  for (const operation of Object.keys(usage.requests)) {
    const service = operation.split(':')[0] as keyof typeof ASSUMED_LATENCY_MS;
    awsMs += ASSUMED_LATENCY_MS[service] ?? 0;
  }
  return {
    recordsPerInvocation: usage.records / usage.invocations,
    msPerInvocation: usage.handlerMs / usage.invocations + awsMs + extraMs,
    writeUnitsPerRecord: usage.units.dynamodbWriteUnits / usage.records,
    readUnitsPerRecord: usage.units.dynamodbReadUnits / usage.records,
  };
}

/** The two publishing modes the simulation runs, from the measured scenarios with one push subscriber. */
export function measuredModes(files: Readonly<Record<string, ResultFile>>): {
  single: MeasuredMode;
  batch10: MeasuredMode;
} {
  const scenarios = collectScenarios(files);
  const mode = (name: string, batch: number): MeasuredMode => {
    const scenario = scenarios[name];
    if (!scenario) throw new Error(`bench/results holds no cost scenario "${name}" (npm run bench cost)`);
    const stage = (stageName: string) => {
      const usage = scenario.stages[stageName];
      if (!usage) throw new Error(`cost scenario "${name}" has no stage "${stageName}"`);
      return usage;
    };
    const many = scenarios['push10'];
    if (!many?.stages['delivery'] || !many.stages['router'])
      throw new Error('bench/results holds no cost scenario "push10" with a router and a delivery stage');
    const router = stageCost(stage('router'));
    return {
      scenario: name,
      measuredAt: scenario.measuredAt,
      batch,
      ingest: stageCost(stage('ingest')),
      router,
      delivery: stageCost(stage('delivery'), ASSUMED_LATENCY_MS.webhook),
      deliveryToMany: stageCost(many.stages['delivery'], ASSUMED_LATENCY_MS.webhook),
      routerMsPerExtraSubscriber: Math.max(
        0,
        (stageCost(many.stages['router']).msPerInvocation - router.msPerInvocation) / 9,
      ),
      dollarsPerMillionEvents: totalOf(dollarsPerMillion(scenario)),
    };
  };
  return { single: mode('push1', 1), batch10: mode('push1Batch10', 10) };
}
