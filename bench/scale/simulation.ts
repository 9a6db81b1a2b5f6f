/**
 * A discrete-time queueing model of one deployed Koerier (issue 35): one step per second through
 * API Gateway's token bucket, the ingest function, the inbound queue and the router's SQS event
 * source, the deliveries queue and the delivery function's event source, with Lambda's account
 * concurrency shared by the three, each function's scaling rate, the event sources' poller growth,
 * the tables' on-demand throughput and the partition limit of one subscriber's delivery state.
 * Costs per invocation are the benchmarks' measurements (./inputs.ts); quotas are AWS's documented
 * defaults or what a run raises. Deterministic: the only randomness, a ±1 % jitter of the offered
 * rate, comes from a seeded generator, so a seed gives the same table every time.
 */
import { QUOTAS, type MeasuredMode, type StageCost } from './inputs.js';

export interface Limits {
  /** Koerier's own stage throttle of the publish route (`koerier:routeThrottling` ingest: 300/600 by default). */
  readonly ingestRoute: { readonly rateLimit: number; readonly burstLimit: number };
  /** `koerier:ingestReservedConcurrency` (50 by default), the ingest function's reservation and ceiling; 0: none (`"none"`). */
  readonly ingestReservedConcurrency: number;
  readonly apiRequestsPerSecond: number;
  readonly lambdaConcurrency: number;
  /** `provisioned`: the event sources in provisioned mode, starting at `minimumConcurrency` and scaling 3 times faster. */
  readonly eventSourceMode: 'standard' | 'provisioned';
  readonly minimumConcurrency: number;
  /** Warm throughput of the idempotency and deliveries tables (new on-demand table: 4,000). */
  readonly tableWriteUnits: number;
}

export const DEFAULT_LIMITS: Limits = {
  ingestRoute: { rateLimit: 300, burstLimit: 600 },
  ingestReservedConcurrency: 50,
  apiRequestsPerSecond: QUOTAS.apiRequestsPerSecond.value,
  lambdaConcurrency: QUOTAS.lambdaConcurrency.value,
  eventSourceMode: 'standard',
  minimumConcurrency: QUOTAS.sqsPollerStart.value,
  tableWriteUnits: QUOTAS.newTableWriteUnits.value,
};

export interface RunConfig {
  readonly name: string;
  readonly mode: MeasuredMode;
  readonly subscribers: number;
  readonly eventsPerSecond: number;
  readonly burst?: { readonly eventsPerSecond: number; readonly fromSecond: number; readonly seconds: number };
  readonly seconds: number;
  readonly limits: Limits;
  /** Partitions one subscriber's delivery state is spread over (functions/aws: attempt packs). */
  readonly deliveryStateShards: number;
  readonly seed: number;
}

export interface Breaking {
  readonly second: number;
  readonly what: string;
}

export interface RunResult {
  readonly config: RunConfig;
  readonly offered: number;
  readonly accepted: number;
  readonly throttledByApi: number;
  readonly refusedByLambda: number;
  readonly refusedByTable: number;
  readonly routed: number;
  readonly delivered: number;
  readonly peakInboundBacklog: { readonly messages: number; readonly second: number };
  readonly peakDeliveryBacklog: { readonly messages: number; readonly second: number };
  readonly backlogAtEnd: number;
  /** Seconds after the burst until both queues were back under one second of work; undefined: never within the run. */
  readonly drainedAfterBurstSeconds: number | undefined;
  readonly peakConcurrency: {
    readonly ingest: number;
    readonly router: number;
    readonly delivery: number;
    readonly total: number;
  };
  readonly peakTableWriteUnits: { readonly idempotency: number; readonly deliveries: number };
  readonly peakPartitionWriteUnits: number;
  readonly costPerHour: number;
  /** Each limit the run reached, the first time it did, earliest first. */
  readonly breaks: readonly Breaking[];
}

/** mulberry32: a small seeded generator, enough for a reproducible jitter. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** One function's execution environments: at most its scaling rate new ones a second, a burst of 1,000 at once. */
class Environments {
  private tokens: number = QUOTAS.lambdaScalingPer10s.value;
  count = 0;
  grow(wanted: number, cap: number): number {
    this.tokens = Math.min(QUOTAS.lambdaScalingPer10s.value, this.tokens + QUOTAS.lambdaScalingPer10s.value / 10);
    const target = Math.min(wanted, cap);
    if (target > this.count) {
      const added = Math.min(target - this.count, this.tokens);
      this.tokens -= added;
      this.count += added;
    } else this.count = target;
    return this.count;
  }
}

/** An SQS event source: concurrent batches that grow while messages wait and fall back when they do not. */
class EventSource {
  concurrency: number;
  constructor(private readonly limits: Limits) {
    this.concurrency = limits.minimumConcurrency;
  }
  step(waiting: boolean, used: number): void {
    const growth =
      (QUOTAS.sqsPollerGrowthPerMinute.value / 60) *
      (this.limits.eventSourceMode === 'provisioned' ? QUOTAS.provisionedScalingFactor.value : 1);
    const max =
      this.limits.eventSourceMode === 'provisioned' ? Number.POSITIVE_INFINITY : QUOTAS.sqsMaxConcurrentBatches.value;
    this.concurrency = waiting
      ? Math.min(max, this.concurrency + growth)
      : Math.max(this.limits.minimumConcurrency, Math.ceil(used));
  }
}

/** An on-demand table: its warm throughput, or twice its peak of the last 30 minutes. */
class OnDemandTable {
  private readonly peaks: number[] = [];
  constructor(private readonly warm: number) {}
  capacity(): number {
    const recent = this.peaks.slice(-1800);
    return Math.max(this.warm, QUOTAS.onDemandPeakGrowth.value * Math.max(0, ...recent));
  }
  record(served: number): void {
    this.peaks.push(served);
  }
}

export function simulate(config: RunConfig): RunResult {
  const { mode, limits, subscribers } = config;
  const random = seeded(config.seed);
  const deliveryCost: StageCost = subscribers > 1 ? mode.deliveryToMany : mode.delivery;
  const routerMs = mode.router.msPerInvocation + mode.routerMsPerExtraSubscriber * (subscribers - 1);
  const environments = { ingest: new Environments(), router: new Environments(), delivery: new Environments() };
  const sources = { router: new EventSource(limits), delivery: new EventSource(limits) };
  const tables = {
    idempotency: new OnDemandTable(limits.tableWriteUnits),
    deliveries: new OnDemandTable(limits.tableWriteUnits),
  };
  const partitionCap =
    (QUOTAS.partitionWriteUnits.value * config.deliveryStateShards) / deliveryCost.writeUnitsPerRecord;

  const totals = {
    offered: 0,
    accepted: 0,
    throttledByApi: 0,
    refusedByLambda: 0,
    refusedByTable: 0,
    routed: 0,
    delivered: 0,
  };
  const peak = {
    inbound: { messages: 0, second: 0 },
    deliveries: { messages: 0, second: 0 },
    concurrency: { ingest: 0, router: 0, delivery: 0, total: 0 },
    table: { idempotency: 0, deliveries: 0 },
    partition: 0,
  };
  const breaks = new Map<string, number>();
  const broke = (second: number, what: string) => {
    if (!breaks.has(what)) breaks.set(what, second);
  };
  let apiTokens: number = QUOTAS.apiBurst.value;
  let routeTokens = limits.ingestRoute.burstLimit;
  let inbound = 0;
  let deliveries = 0;
  let drainedAt: number | undefined;
  const burstEnd = config.burst ? config.burst.fromSecond + config.burst.seconds : undefined;

  for (let second = 0; second < config.seconds; second++) {
    const inBurst = config.burst && second >= config.burst.fromSecond && second < burstEnd!;
    const rate = inBurst ? config.burst!.eventsPerSecond : config.eventsPerSecond;
    const offered = Math.round(rate * (0.99 + 0.02 * random()));
    totals.offered += offered;

    // API Gateway: the publish route's throttle, then the account's token bucket with AWS's burst on top.
    const requests = offered / mode.batch;
    const routeAvailable = routeTokens + limits.ingestRoute.rateLimit;
    const routed429 = Math.max(0, requests - routeAvailable);
    routeTokens = Math.min(limits.ingestRoute.burstLimit, routeAvailable - (requests - routed429));
    if (routed429 > 0) broke(second, 'the publish route’s throttle (koerier:routeThrottling) answers 429');
    const available = apiTokens + limits.apiRequestsPerSecond;
    const admitted = Math.min(requests - routed429, available);
    apiTokens = Math.min(QUOTAS.apiBurst.value, available - admitted);
    if (admitted < requests - routed429)
      broke(second, 'API Gateway throttles publishes (429): the account’s requests per second');
    totals.throttledByApi += (requests - admitted) * mode.batch;

    // Ingest: synchronous, so it is served first from the account's concurrency.
    const ingestWanted = (admitted * mode.ingest.msPerInvocation) / 1000;
    const ingestEnvs = environments.ingest.grow(
      ingestWanted,
      limits.ingestReservedConcurrency > 0
        ? Math.min(limits.lambdaConcurrency, limits.ingestReservedConcurrency)
        : limits.lambdaConcurrency,
    );
    let servedRequests = ingestWanted > 0 ? admitted * Math.min(1, ingestEnvs / ingestWanted) : 0;
    if (servedRequests < admitted - 1e-6)
      broke(
        second,
        limits.ingestReservedConcurrency > 0 && ingestEnvs >= limits.ingestReservedConcurrency
          ? 'the ingest function’s reserved concurrency (koerier:ingestReservedConcurrency) refuses publishes'
          : ingestEnvs >= limits.lambdaConcurrency
            ? 'Lambda account concurrency refuses publishes'
            : 'the ingest function’s scaling rate refuses publishes',
      );
    totals.refusedByLambda += (admitted - servedRequests) * mode.batch;
    const idempotencyCapacity = tables.idempotency.capacity();
    const ingestUnits = servedRequests * mode.ingest.writeUnitsPerRecord;
    if (ingestUnits > idempotencyCapacity) {
      broke(second, 'the idempotency table’s throughput refuses publishes');
      totals.refusedByTable += (servedRequests - idempotencyCapacity / mode.ingest.writeUnitsPerRecord) * mode.batch;
      servedRequests = idempotencyCapacity / mode.ingest.writeUnitsPerRecord;
    }
    const acceptedNow = servedRequests * mode.batch;
    totals.accepted += acceptedNow;
    inbound += acceptedNow;
    const ingestUsed = (servedRequests * mode.ingest.msPerInvocation) / 1000;

    // Router: the inbound queue's event source, within what ingest's reservation left of the account.
    const routerRoom = Math.max(
      0,
      limits.lambdaConcurrency -
        Math.max(ingestUsed, Math.min(limits.ingestReservedConcurrency, limits.lambdaConcurrency)),
    );
    const routerBatches = Math.min(sources.router.concurrency, routerRoom);
    const routerEnvs = environments.router.grow(routerBatches, routerRoom);
    let routerCapacity = (routerEnvs * mode.router.recordsPerInvocation * 1000) / routerMs;
    const routerTableRoom = Math.max(0, idempotencyCapacity - servedRequests * mode.ingest.writeUnitsPerRecord);
    if (
      routerCapacity * mode.router.writeUnitsPerRecord > routerTableRoom &&
      inbound * mode.router.writeUnitsPerRecord > routerTableRoom
    ) {
      broke(second, 'the idempotency table’s throughput slows routing');
      routerCapacity = routerTableRoom / mode.router.writeUnitsPerRecord;
    }
    const routed = Math.min(inbound, routerCapacity);
    inbound -= routed;
    totals.routed += routed;
    const routerUsed = (routed / mode.router.recordsPerInvocation) * (routerMs / 1000);
    if (
      inbound > 1 &&
      sources.router.concurrency >= QUOTAS.sqsMaxConcurrentBatches.value &&
      limits.eventSourceMode === 'standard'
    )
      broke(second, 'the router’s event source is at its 1,000 concurrent batches');
    sources.router.step(inbound > 0, routerUsed);
    tables.idempotency.record(
      servedRequests * mode.ingest.writeUnitsPerRecord + routed * mode.router.writeUnitsPerRecord,
    );
    deliveries += routed * subscribers;

    // Delivery: what is left of the account, and one subscriber's delivery state partitions.
    const deliveryRoom = Math.max(
      0,
      limits.lambdaConcurrency -
        Math.max(ingestUsed, Math.min(limits.ingestReservedConcurrency, limits.lambdaConcurrency)) -
        routerUsed,
    );
    const deliveryBatches = Math.min(sources.delivery.concurrency, deliveryRoom);
    const deliveryEnvs = environments.delivery.grow(deliveryBatches, deliveryRoom);
    let deliveryCapacity = (deliveryEnvs * deliveryCost.recordsPerInvocation * 1000) / deliveryCost.msPerInvocation;
    if (deliveryCapacity > partitionCap * subscribers && deliveries > partitionCap * subscribers) {
      broke(second, 'one subscriber’s delivery state passes 1,000 write units on its partition');
      deliveryCapacity = partitionCap * subscribers;
    }
    const deliveriesTableCapacity = tables.deliveries.capacity();
    if (
      deliveryCapacity * deliveryCost.writeUnitsPerRecord > deliveriesTableCapacity &&
      deliveries * deliveryCost.writeUnitsPerRecord > deliveriesTableCapacity
    ) {
      broke(second, 'the deliveries table’s throughput slows deliveries');
      deliveryCapacity = deliveriesTableCapacity / deliveryCost.writeUnitsPerRecord;
    }
    const delivered = Math.min(deliveries, deliveryCapacity);
    deliveries -= delivered;
    totals.delivered += delivered;
    const deliveryUsed = (delivered / deliveryCost.recordsPerInvocation) * (deliveryCost.msPerInvocation / 1000);
    if (
      deliveries > 1 &&
      sources.delivery.concurrency >= QUOTAS.sqsMaxConcurrentBatches.value &&
      limits.eventSourceMode === 'standard'
    )
      broke(second, 'the delivery function’s event source is at its 1,000 concurrent batches');
    sources.delivery.step(deliveries > 0, deliveryUsed);
    tables.deliveries.record(delivered * deliveryCost.writeUnitsPerRecord);
    if ((inbound > 1 || deliveries > 1) && ingestUsed + routerUsed + deliveryUsed >= limits.lambdaConcurrency - 1)
      broke(second, 'Lambda account concurrency holds back the queues');

    const total = ingestUsed + routerUsed + deliveryUsed;
    const max = (a: number, b: number) => Math.max(a, Math.round(b));
    peak.concurrency = {
      ingest: max(peak.concurrency.ingest, ingestUsed),
      router: max(peak.concurrency.router, routerUsed),
      delivery: max(peak.concurrency.delivery, deliveryUsed),
      total: max(peak.concurrency.total, total),
    };
    peak.table = {
      idempotency: max(
        peak.table.idempotency,
        servedRequests * mode.ingest.writeUnitsPerRecord + routed * mode.router.writeUnitsPerRecord,
      ),
      deliveries: max(peak.table.deliveries, delivered * deliveryCost.writeUnitsPerRecord),
    };
    peak.partition = max(
      peak.partition,
      ((delivered / subscribers) * deliveryCost.writeUnitsPerRecord) / config.deliveryStateShards,
    );
    if (inbound > peak.inbound.messages) peak.inbound = { messages: Math.round(inbound), second };
    if (deliveries > peak.deliveries.messages) peak.deliveries = { messages: Math.round(deliveries), second };
    const oneSecondOfWork = config.eventsPerSecond * (1 + subscribers);
    if (
      burstEnd !== undefined &&
      second >= burstEnd &&
      drainedAt === undefined &&
      inbound + deliveries < oneSecondOfWork
    )
      drainedAt = second - burstEnd;
  }

  const hours = config.seconds / 3600;
  return {
    config,
    offered: Math.round(totals.offered),
    accepted: Math.round(totals.accepted),
    throttledByApi: Math.round(totals.throttledByApi),
    refusedByLambda: Math.round(totals.refusedByLambda),
    refusedByTable: Math.round(totals.refusedByTable),
    routed: Math.round(totals.routed),
    delivered: Math.round(totals.delivered),
    peakInboundBacklog: peak.inbound,
    peakDeliveryBacklog: peak.deliveries,
    backlogAtEnd: Math.round(inbound + deliveries),
    drainedAfterBurstSeconds: drainedAt,
    peakConcurrency: peak.concurrency,
    peakTableWriteUnits: peak.table,
    peakPartitionWriteUnits: peak.partition,
    costPerHour: ((totals.accepted / 1_000_000) * mode.dollarsPerMillionEvents) / hours,
    breaks: [...breaks].map(([what, second]) => ({ second, what })).sort((a, b) => a.second - b.second),
  };
}
