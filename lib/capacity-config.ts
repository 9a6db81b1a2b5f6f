/**
 * The two capacity settings docs/SCALE.md asks for at 10,000 events a second (issue 35):
 *
 * - `koerier:provisionedPollers`: the router's and the delivery function's SQS event sources in
 *   provisioned mode, with a minimum of pollers kept ready and a maximum they may grow to.
 * - `koerier:warmThroughput`: the idempotency and deliveries tables pre-warmed, so the first peak
 *   is not throttled while an on-demand table grows from its starting 12,000 reads and 4,000
 *   writes a second.
 *
 * Each is refused at synth when AWS would refuse it at deploy, with the bound and its source in
 * the message, rather than failing half-way through a CloudFormation update.
 */
import { readJsonSetting } from './json-setting.js';

export const capacityContextKey = {
  provisionedPollers: 'koerier:provisionedPollers',
  warmThroughput: 'koerier:warmThroughput',
} as const;

/**
 * The functions whose event source may be provisioned: the two that scale with the traffic
 * (one router batch per inbound batch, one delivery batch per subscriber's batch). The alerts,
 * replay and erasure workers handle a trickle, and a minimum of pollers would be paid for idle.
 */
export const PROVISIONABLE_EVENT_SOURCES = ['router', 'delivery'] as const;

/**
 * AWS's bounds for an SQS event source in provisioned mode: MinimumPollers 2 to 200 (default 2),
 * MaximumPollers 2 to 2,000 (default 200), per the CloudFormation reference,
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-lambda-eventsourcemapping-provisionedpollerconfig.html,
 * and aws-cdk-lib's SqsEventSource, which refuses the same. (The Lambda API reference has begun to
 * name 10,000 as SQS's maximum; CloudFormation and the installed CDK still stop at 2,000.)
 */
export const SQS_POLLERS = { min: 2, maxOfMinimum: 200, maxOfMaximum: 2000 } as const;

/**
 * The tables written once per event or per delivery, the ones a first peak throttles
 * (docs/SCALE.md, "No hot keys"); the others are read-mostly and small.
 */
export const WARMABLE_TABLES = ['idempotency', 'deliveries'] as const;

/**
 * A new on-demand table starts with 12,000 read and 4,000 write units a second of warm throughput,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html;
 * less asks for nothing, and warm throughput once raised is never lowered
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html).
 */
export const ON_DEMAND_STARTING_WARM_THROUGHPUT = { readUnitsPerSecond: 12000, writeUnitsPerSecond: 4000 } as const;

/**
 * DynamoDB pre-warms a table only up to the account's table-level throughput quota, 40,000 read
 * and 40,000 write request units by default for an on-demand table
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html): above it
 * the deployment fails unless the quota was raised, which the synth cannot see, so it warns.
 */
export const DEFAULT_TABLE_QUOTA_UNITS = 40000;

export interface PollerSettings {
  readonly minimumPollers?: number;
  readonly maximumPollers?: number;
}

export interface WarmThroughputSettings {
  readonly readUnitsPerSecond?: number;
  readonly writeUnitsPerSecond?: number;
}

export interface CapacityConfig {
  /** Per function of PROVISIONABLE_EVENT_SOURCES given: its event source's provisioned mode; absent: standard mode. */
  readonly provisionedPollers: Readonly<Record<string, PollerSettings>>;
  /** Per table of WARMABLE_TABLES given: its warm throughput; absent: what DynamoDB gives it. */
  readonly warmThroughput: Readonly<Record<string, WarmThroughputSettings>>;
}

/** Both settings from raw context values; every problem is added to `issues`. */
export function parseCapacityConfig(context: Readonly<Record<string, unknown>>, issues: string[]): CapacityConfig {
  return {
    provisionedPollers: parseProvisionedPollers(context[capacityContextKey.provisionedPollers], issues),
    warmThroughput: parseWarmThroughput(context[capacityContextKey.warmThroughput], issues),
  };
}

function parseProvisionedPollers(raw: unknown, issues: string[]): Record<string, PollerSettings> {
  const key = capacityContextKey.provisionedPollers;
  const example = '{"router": {"minimumPollers": 50, "maximumPollers": 500}}';
  const entries = perName(
    raw,
    key,
    example,
    PROVISIONABLE_EVENT_SOURCES,
    'function with a provisionable event source',
    issues,
  );
  const settings: Record<string, PollerSettings> = {};
  for (const [name, value] of entries) {
    const given = fields(value, `${key} of "${name}"`, ['minimumPollers', 'maximumPollers'], example, issues);
    if (given === undefined) continue;
    const minimum = given['minimumPollers'];
    const maximum = given['maximumPollers'];
    const where = 'AWS accepts for an SQS event source (CloudFormation ProvisionedPollerConfig)';
    const minimumOk = checkWhole(
      minimum,
      `${key} of "${name}": minimumPollers`,
      SQS_POLLERS.min,
      SQS_POLLERS.maxOfMinimum,
      where,
      issues,
    );
    const maximumOk = checkWhole(
      maximum,
      `${key} of "${name}": maximumPollers`,
      SQS_POLLERS.min,
      SQS_POLLERS.maxOfMaximum,
      where,
      issues,
    );
    if (!minimumOk || !maximumOk) continue;
    if (typeof minimum === 'number' && typeof maximum === 'number' && minimum > maximum) {
      issues.push(`${key} of "${name}": minimumPollers ${minimum} is more than maximumPollers ${maximum}`);
      continue;
    }
    settings[name] = {
      ...(minimum === undefined ? {} : { minimumPollers: minimum as number }),
      ...(maximum === undefined ? {} : { maximumPollers: maximum as number }),
    };
  }
  return settings;
}

function parseWarmThroughput(raw: unknown, issues: string[]): Record<string, WarmThroughputSettings> {
  const key = capacityContextKey.warmThroughput;
  const example = '{"idempotency": {"writeUnitsPerSecond": 40000}}';
  const entries = perName(raw, key, example, WARMABLE_TABLES, 'table that takes warm throughput', issues);
  const settings: Record<string, WarmThroughputSettings> = {};
  for (const [name, value] of entries) {
    const given = fields(value, `${key} of "${name}"`, ['readUnitsPerSecond', 'writeUnitsPerSecond'], example, issues);
    if (given === undefined) continue;
    let valid = true;
    for (const field of ['readUnitsPerSecond', 'writeUnitsPerSecond'] as const) {
      const starting = ON_DEMAND_STARTING_WARM_THROUGHPUT[field];
      const where = `a new on-demand table starts at ${starting}, less asks for nothing, and DynamoDB never lowers warm throughput`;
      valid =
        checkWhole(given[field], `${key} of "${name}": ${field}`, starting, Number.MAX_SAFE_INTEGER, where, issues) &&
        valid;
    }
    if (!valid) continue;
    settings[name] = given as WarmThroughputSettings;
  }
  return settings;
}

/** Warm throughput above the default table quota: valid with a raised quota, a failed deployment without one. */
export function capacityWarnings(config: CapacityConfig): { id: string; message: string }[] {
  const above = Object.entries(config.warmThroughput).flatMap(([table, units]) =>
    Object.entries(units)
      .filter(([, value]) => value > DEFAULT_TABLE_QUOTA_UNITS)
      .map(([field, value]) => `"${table}" ${field} ${value}`),
  );
  if (above.length === 0) return [];
  return [
    {
      id: 'Koerier::WarmThroughputAboveDefaultQuota',
      message: `${capacityContextKey.warmThroughput} asks for ${above.join(', ')}, above DynamoDB's default table-level quota of ${DEFAULT_TABLE_QUOTA_UNITS} units a second: the deployment fails unless the account's quota in this Region was raised (Service Quotas, DynamoDB "Table-level read/write throughput limit")`,
    },
  ];
}

/** The entries of an object keyed by `names`, others reported; nothing when the setting is absent. */
function perName(
  raw: unknown,
  key: string,
  example: string,
  names: readonly string[],
  what: string,
  issues: string[],
): [string, unknown][] {
  if (raw === undefined) return [];
  const read = readJsonSetting(key, raw, example);
  if ('invalid' in read) {
    issues.push(read.invalid);
    return [];
  }
  const given = asJsonObject(read.value);
  if (given === undefined) {
    issues.push(`${key} must be an object, e.g. ${example}, got ${JSON.stringify(raw)}`);
    return [];
  }
  return Object.entries(given).filter(([name]) => {
    if (names.includes(name)) return true;
    issues.push(`${key} names "${name}", which is no ${what} (${names.join(', ')})`);
    return false;
  });
}

/** An object with at least one of `allowed` and nothing else, or undefined with the problem reported. */
function fields(
  value: unknown,
  where: string,
  allowed: readonly string[],
  example: string,
  issues: string[],
): Record<string, unknown> | undefined {
  const object = asJsonObject(value);
  const unknown = object === undefined ? [] : Object.keys(object).filter((field) => !allowed.includes(field));
  if (object === undefined || unknown.length > 0 || Object.keys(object).length === 0) {
    const problem = unknown.length > 0 ? `has ${unknown.map((f) => `"${f}"`).join(', ')}, ` : '';
    issues.push(
      `${where} ${problem}must be an object of ${allowed.join(' and/or ')}, e.g. ${example}, got ${JSON.stringify(value)}`,
    );
    return undefined;
  }
  return object;
}

/** True when `value` is absent or a whole number within the bounds; otherwise the problem is reported. */
function checkWhole(value: unknown, label: string, min: number, max: number, why: string, issues: string[]): boolean {
  if (value === undefined) return true;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return true;
  const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
  issues.push(`${label} must be a whole number ${range} (${why}), got ${JSON.stringify(value)}`);
  return false;
}

/** A JSON object's value (from cdk.json, or parsed from `-c` text), or undefined for anything else. */
function asJsonObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
