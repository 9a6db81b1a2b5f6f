/**
 * The Metrics port's AWS adapter (functions/aws/emf-metrics.ts): figures summed per invocation and
 * written as one EMF record per set of dimension values, under the stack's name; each record the
 * very one Powertools for AWS Lambda's Metrics writes for the same figures, but for the timestamp.
 */
import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { Metrics as PowertoolsMetricsWriter } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { EmfMetrics } from '../../../functions/aws/emf-metrics.js';
import { observability } from '../../../functions/config/resources.js';

type Record = {
  [name: string]: unknown;
  _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
};

function written(record: (metrics: EmfMetrics) => void): Record[] {
  const lines: string[] = [];
  const metrics = new EmfMetrics('stack-a', (line) => lines.push(line));
  record(metrics);
  metrics.flush();
  return lines.map((line) => JSON.parse(line) as Record);
}

/** What Powertools writes for one record's dimensions and metrics (values: one number, or several for a sampled figure). */
function powertoolsRecord(
  stack: string,
  dimensions: { [name: string]: string },
  metrics: [name: string, unit: 'Count' | 'Milliseconds', values: number[]][],
): Record {
  const lines: string[] = [];
  const writer = new PowertoolsMetricsWriter({
    namespace: observability.namespace,
    serviceName: observability.service,
    defaultDimensions: { Stack: stack },
  });
  const out = new Writable({
    write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString('utf8').trimEnd()), done()),
  });
  (writer as unknown as { console: Console }).console = new Console({ stdout: out, stderr: out });
  for (const [name, value] of Object.entries(dimensions)) writer.addDimension(name, value);
  for (const [name, unit, values] of metrics) for (const value of values) writer.addMetric(name, unit, value);
  writer.publishStoredMetrics();
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record;
}

const withoutTimestamp = (record: Record) => ({ ...record, _aws: { ...record._aws, Timestamp: 0 } });

describe('EmfMetrics', () => {
  it('issue 15 #4: each record is the one Powertools Metrics writes for the same figures, but for the timestamp', () => {
    const records = written((metrics) => {
      metrics.deliveryAttempted({ subscriptionId: 's-1', outcome: 'delivered', latencyMs: 30 });
      metrics.deliveryAttempted({ subscriptionId: 's-1', outcome: 'delivered', latencyMs: 50 });
      metrics.eventsRouted({ routed: 3, duplicates: 0, deliveries: 2 });
      metrics.publishRejected('rate-limited');
      metrics.replayProgress('s-2', { scanned: 10, matched: 4, sent: 4, failed: 0 });
    });
    const expected = [
      powertoolsRecord('stack-a', { Outcome: 'delivered' }, [['DeliveryOutcomes', 'Count', [2]]]),
      powertoolsRecord('stack-a', {}, [
        ['AttemptLatency', 'Milliseconds', [30, 50]],
        ['EventsRouted', 'Count', [3]],
        ['DuplicatesDropped', 'Count', [0]],
        ['DeliveriesQueued', 'Count', [2]],
      ]),
      powertoolsRecord('stack-a', { SubscriptionId: 's-1', Outcome: 'delivered' }, [
        ['SubscriptionDeliveries', 'Count', [2]],
      ]),
      powertoolsRecord('stack-a', { Rule: 'rate-limited' }, [['PublishRejected', 'Count', [1]]]),
      powertoolsRecord('stack-a', { SubscriptionId: 's-2' }, [
        [observability.metrics.replayScanned, 'Count', [10]],
        [observability.metrics.replayMatched, 'Count', [4]],
        [observability.metrics.replaySent, 'Count', [4]],
        [observability.metrics.replayFailed, 'Count', [0]],
      ]),
    ];
    expect(records.map(withoutTimestamp)).toEqual(expected.map(withoutTimestamp));
    for (const record of records)
      expect(Math.abs((record._aws as unknown as { Timestamp: number }).Timestamp - Date.now())).toBeLessThan(60_000);
  });

  it('issue 15 #4: a sampled figure with one value is written as that value, as Powertools writes it', () => {
    const latency = written((metrics) =>
      metrics.deliveryAttempted({ subscriptionId: 's-1', outcome: 'delivered', latencyMs: 42 }),
    ).find((record) => 'AttemptLatency' in record)!;
    expect(withoutTimestamp(latency)).toEqual(
      withoutTimestamp(powertoolsRecord('stack-a', {}, [['AttemptLatency', 'Milliseconds', [42]]])),
    );
  });

  it("sums one invocation's attempts into one record per dimension set, keeps each latency, and writes nothing more on the next flush", () => {
    const lines: string[] = [];
    const metrics = new EmfMetrics('stack-a', (line) => lines.push(line));
    metrics.deliveryAttempted({ subscriptionId: 's-1', outcome: 'delivered', latencyMs: 30 });
    metrics.deliveryAttempted({ subscriptionId: 's-1', outcome: 'delivered', latencyMs: 50 });
    metrics.deliveryAttempted({ subscriptionId: 's-2', outcome: 'retrying', latencyMs: 900 });
    metrics.flush();
    const records = lines.map((line) => JSON.parse(line) as Record);
    const outcome = (value: string) =>
      records.find((record) => record['Outcome'] === value && record['SubscriptionId'] === undefined);
    expect(outcome('delivered')).toMatchObject({ Stack: 'stack-a', service: 'koerier', DeliveryOutcomes: 2 });
    expect(outcome('retrying')).toMatchObject({ DeliveryOutcomes: 1 });
    expect(records.find((record) => 'AttemptLatency' in record)).toMatchObject({ AttemptLatency: [30, 50, 900] });
    expect(records.find((record) => record['SubscriptionId'] === 's-1')).toMatchObject({
      Outcome: 'delivered',
      SubscriptionDeliveries: 2,
    });
    expect(records).toHaveLength(5);
    metrics.flush();
    expect(lines).toHaveLength(5);
  });

  it('an invocation that recorded nothing writes nothing', () => {
    expect(written(() => undefined)).toEqual([]);
  });

  it('a refusal is counted under its rule, with the Stack dimension', () => {
    const [record] = written((metrics) => metrics.publishRejected('rate-limited'));
    expect(record!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'Stack', 'Rule']]);
    expect(record).toMatchObject({ Stack: 'stack-a', Rule: 'rate-limited', PublishRejected: 1 });
  });
});
