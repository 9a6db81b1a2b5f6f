/**
 * The Metrics port's AWS adapter (functions/aws/powertools-metrics.ts): figures summed per
 * invocation and written as one EMF record per set of dimension values, under the stack's name.
 */
import { describe, expect, it } from 'vitest';
import { PowertoolsMetrics } from '../../../functions/aws/powertools-metrics.js';

type Record = { [name: string]: unknown; _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] } };

function written(record: (metrics: PowertoolsMetrics) => void): Record[] {
  const lines: string[] = [];
  const metrics = new PowertoolsMetrics('stack-a', (line) => lines.push(line));
  record(metrics);
  metrics.flush();
  return lines.map((line) => JSON.parse(line) as Record);
}

describe('PowertoolsMetrics', () => {
  it("sums one invocation's attempts into one record per dimension set, keeps each latency, and writes nothing more on the next flush", () => {
    const lines: string[] = [];
    const metrics = new PowertoolsMetrics('stack-a', (line) => lines.push(line));
    metrics.deliveryAttempted({ subscriptionId: 's-1', outcome: 'delivered', latencyMs: 30 });
    metrics.deliveryAttempted({ subscriptionId: 's-1', outcome: 'delivered', latencyMs: 50 });
    metrics.deliveryAttempted({ subscriptionId: 's-2', outcome: 'retrying', latencyMs: 900 });
    metrics.flush();
    const records = lines.map((line) => JSON.parse(line) as Record);
    const outcome = (value: string) => records.find((record) => record['Outcome'] === value && record['SubscriptionId'] === undefined);
    expect(outcome('delivered')).toMatchObject({ Stack: 'stack-a', service: 'koerier', DeliveryOutcomes: 2 });
    expect(outcome('retrying')).toMatchObject({ DeliveryOutcomes: 1 });
    expect(records.find((record) => 'AttemptLatency' in record)).toMatchObject({ AttemptLatency: [30, 50, 900] });
    expect(records.find((record) => record['SubscriptionId'] === 's-1')).toMatchObject({ Outcome: 'delivered', SubscriptionDeliveries: 2 });
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
