/**
 * Issue 35, the capacity knobs of docs/SCALE.md as deployment settings (lib/capacity-config.ts):
 * `koerier:provisionedPollers` puts the router's and the delivery function's SQS event sources in
 * provisioned mode, `koerier:warmThroughput` pre-warms the idempotency and deliveries tables. The
 * template carries exactly what was given and nothing where nothing was; what AWS would refuse at
 * deploy is refused at synth.
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { parseStackConfig, stackConfigWarnings, StackConfigError } from '../../lib/stack-config.js';
import { cdkJsonContext, logicalId, requiredTestContext, synthKoerier, type CfnResourceJson } from './synth.js';

const POLLERS = { router: { minimumPollers: 50, maximumPollers: 500 }, delivery: { minimumPollers: 10 } };
// deliveries above the default table quota of 40,000: valid with a raised quota, so a warning.
const WARM = {
  idempotency: { writeUnitsPerSecond: 40000 },
  deliveries: { readUnitsPerSecond: 12000, writeUnitsPerSecond: 50000 },
};

let synthesised: ReturnType<typeof synthKoerier> | undefined;
/** One synth for the file, with both settings (a synth takes tens of seconds on the shared machine). */
function synth() {
  synthesised ??= synthKoerier({
    // Text, as `-c koerier:provisionedPollers='{…}'` gives it; an object, as cdk.json does.
    context: { 'koerier:provisionedPollers': JSON.stringify(POLLERS), 'koerier:warmThroughput': WARM },
  });
  return synthesised;
}

/** The problem lines of a refused context. */
function problemsOf(context: Record<string, unknown>): string[] {
  try {
    parseStackConfig({ ...cdkJsonContext, ...requiredTestContext, ...context });
  } catch (error) {
    expect(error).toBeInstanceOf(StackConfigError);
    const lines = (error as Error).message.split('\n');
    if (lines.length === 1) return [lines[0]!.replace(/^Koerier's CDK context is invalid: /, '')];
    return lines.slice(1).map((line) => line.trim());
  }
  throw new Error('expected a StackConfigError');
}

describe('issue 35: provisioned pollers and warm throughput as deployment settings', () => {
  it('SCALE-1: koerier:provisionedPollers sets the router and delivery event sources to exactly the pollers given, no other event source, and none with a maximum concurrency', () => {
    const { stack, resources } = synth();
    const mappingsOf = (name: string): CfnResourceJson[] => {
      const id = logicalId(stack, stack.functions.get(name)!.function);
      return Object.values(resources).filter(
        (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(r.Properties.FunctionName).includes(id),
      );
    };
    const [router] = mappingsOf('router');
    const [delivery] = mappingsOf('delivery');
    expect(router!.Properties.ProvisionedPollerConfig).toEqual({ MinimumPollers: 50, MaximumPollers: 500 });
    expect(delivery!.Properties.ProvisionedPollerConfig).toEqual({ MinimumPollers: 10 });
    for (const name of ['alerts', 'replayWorker', 'erasureWorker']) {
      expect(mappingsOf(name)).toHaveLength(1);
      expect(mappingsOf(name)[0]!.Properties.ProvisionedPollerConfig, name).toBeUndefined();
    }
    // AWS takes provisioned mode or a maximum concurrency, never both (services-sqs-scaling.html).
    const mappings = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping');
    expect(mappings.map((r) => r.Properties.ScalingConfig)).toEqual(mappings.map(() => undefined));
  }, 240_000);

  it('SCALE-2: koerier:warmThroughput gives the idempotency and deliveries tables exactly the warm throughput given, no other table any', () => {
    const { stack, resources } = synth();
    const tableOf = (name: string) => resources[logicalId(stack, stack.tables.byName.get(name)!.table)]!;
    expect(tableOf('idempotency').Properties.WarmThroughput).toEqual({ WriteUnitsPerSecond: 40000 });
    expect(tableOf('deliveries').Properties.WarmThroughput).toEqual({
      ReadUnitsPerSecond: 12000,
      WriteUnitsPerSecond: 50000,
    });
    for (const name of [...stack.tables.byName.keys()].filter((n) => n !== 'idempotency' && n !== 'deliveries'))
      expect(tableOf(name).Properties.WarmThroughput, name).toBeUndefined();
    // Above the default table-level quota: a warning the CDK CLI prints, not an error.
    const annotations = Annotations.fromStack(stack);
    annotations.hasWarning(
      `/${stack.stackName}`,
      Match.stringLikeRegexp('^koerier:warmThroughput asks for "deliveries" writeUnitsPerSecond 50000, above'),
    );
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
  }, 240_000);

  it('SCALE-1: provisioned pollers AWS would refuse, an unknown function or field, and min above max are refused at synth', () => {
    const key = 'koerier:provisionedPollers';
    const range = (field: string, bounds: string, got: unknown) =>
      `${key} of "router": ${field} must be a whole number from ${bounds} (AWS accepts for an SQS event source (CloudFormation ProvisionedPollerConfig)), got ${JSON.stringify(got)}`;
    expect(problemsOf({ [key]: { router: { minimumPollers: 1 } } })).toEqual([range('minimumPollers', '2 to 200', 1)]);
    expect(problemsOf({ [key]: { router: { minimumPollers: 201 } } })).toEqual([
      range('minimumPollers', '2 to 200', 201),
    ]);
    expect(problemsOf({ [key]: { router: { maximumPollers: 2001 } } })).toEqual([
      range('maximumPollers', '2 to 2000', 2001),
    ]);
    expect(problemsOf({ [key]: { router: { minimumPollers: 2.5 } } })).toEqual([
      range('minimumPollers', '2 to 200', 2.5),
    ]);
    expect(problemsOf({ [key]: { router: { minimumPollers: '50' } } })).toEqual([
      range('minimumPollers', '2 to 200', '50'),
    ]);
    expect(problemsOf({ [key]: { router: { minimumPollers: 100, maximumPollers: 50 } } })).toEqual([
      `${key} of "router": minimumPollers 100 is more than maximumPollers 50`,
    ]);
    expect(problemsOf({ [key]: { alerts: { minimumPollers: 2 } } })).toEqual([
      `${key} names "alerts", which is no function with a provisionable event source (router, delivery)`,
    ]);
    expect(problemsOf({ [key]: { routr: { minimumPollers: 2 } } })).toEqual([
      `${key} names "routr", which is no function with a provisionable event source (router, delivery)`,
    ]);
    expect(problemsOf({ [key]: { router: { min: 50 } } })).toEqual([
      `${key} of "router" has "min", must be an object of minimumPollers and/or maximumPollers, e.g. {"router": {"minimumPollers": 50, "maximumPollers": 500}}, got {"min":50}`,
    ]);
    expect(problemsOf({ [key]: { router: {} } })[0]).toMatch(
      /^koerier:provisionedPollers of "router" must be an object/,
    );
    expect(problemsOf({ [key]: 50 })[0]).toMatch(/^koerier:provisionedPollers must be an object, e.g. /);
    expect(problemsOf({ [key]: '{"router": {minimumPollers: 50}}' })[0]).toMatch(
      /^koerier:provisionedPollers is not valid JSON: a property name in double quotes expected/,
    );
    // The bounds themselves are taken.
    expect(
      parseStackConfig({ ...requiredTestContext, [key]: { delivery: { minimumPollers: 200, maximumPollers: 2000 } } })
        .capacity.provisionedPollers,
    ).toEqual({ delivery: { minimumPollers: 200, maximumPollers: 2000 } });
  });

  it("SCALE-2: warm throughput below a new table's, not whole, with an unknown field, or on another table is refused at synth; above the default quota warned", () => {
    const key = 'koerier:warmThroughput';
    const tooLow = (table: string, field: string, starting: number, got: unknown) =>
      `${key} of "${table}": ${field} must be a whole number at least ${starting} (a new on-demand table starts at ${starting}, less asks for nothing, and DynamoDB never lowers warm throughput), got ${JSON.stringify(got)}`;
    expect(problemsOf({ [key]: { idempotency: { writeUnitsPerSecond: 3999 } } })).toEqual([
      tooLow('idempotency', 'writeUnitsPerSecond', 4000, 3999),
    ]);
    expect(problemsOf({ [key]: { deliveries: { readUnitsPerSecond: 11999 } } })).toEqual([
      tooLow('deliveries', 'readUnitsPerSecond', 12000, 11999),
    ]);
    expect(problemsOf({ [key]: { deliveries: { writeUnitsPerSecond: '40000' } } })).toEqual([
      tooLow('deliveries', 'writeUnitsPerSecond', 4000, '40000'),
    ]);
    expect(problemsOf({ [key]: { deliveries: { writeUnitsPerSecond: 4000.5 } } })).toEqual([
      tooLow('deliveries', 'writeUnitsPerSecond', 4000, 4000.5),
    ]);
    expect(problemsOf({ [key]: { subscriptions: { readUnitsPerSecond: 20000 } } })).toEqual([
      `${key} names "subscriptions", which is no table that takes warm throughput (idempotency, deliveries)`,
    ]);
    expect(problemsOf({ [key]: { idempotency: { writeUnits: 40000 } } })).toEqual([
      `${key} of "idempotency" has "writeUnits", must be an object of readUnitsPerSecond and/or writeUnitsPerSecond, e.g. {"idempotency": {"writeUnitsPerSecond": 40000}}, got {"writeUnits":40000}`,
    ]);
    expect(problemsOf({ [key]: { idempotency: {} } })[0]).toMatch(
      /^koerier:warmThroughput of "idempotency" must be an object/,
    );
    const warnings = (warm: unknown) =>
      stackConfigWarnings(
        parseStackConfig({ ...requiredTestContext, 'koerier:alarmEmail': 'ops@example.org', [key]: warm }),
      ).map((w) => w.id);
    expect(warnings({ idempotency: { writeUnitsPerSecond: 40000, readUnitsPerSecond: 40000 } })).toEqual([]);
    expect(warnings({ idempotency: { writeUnitsPerSecond: 40001 } })).toEqual([
      'Koerier::WarmThroughputAboveDefaultQuota',
    ]);
  });

  it('SCALE-1, SCALE-2: a refused capacity setting stops the synth before any stack is built', () => {
    expect(() =>
      synthKoerier({ context: { 'koerier:provisionedPollers': { router: { minimumPollers: 0 } } } }),
    ).toThrow(
      /^Koerier's CDK context is invalid: koerier:provisionedPollers of "router": minimumPollers must be a whole number from 2 to 200/,
    );
    expect(() =>
      synthKoerier({ context: { 'koerier:warmThroughput': { idempotency: { writeUnitsPerSecond: 100 } } } }),
    ).toThrow(
      /^Koerier's CDK context is invalid: koerier:warmThroughput of "idempotency": writeUnitsPerSecond must be a whole number at least 4000/,
    );
  });
});
