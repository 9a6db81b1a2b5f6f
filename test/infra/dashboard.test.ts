/**
 * The operator's CloudWatch dashboard (issue 13, item 4): it exists once per stack, and every graph
 * of Koerier's own figures reads exactly the series the functions write — the same namespace,
 * metric names and dimension sets as the EMF records of functions/aws/emf-metrics.ts, under
 * this stack's name, so two stacks in one account each see their own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EmfMetrics } from '../../functions/aws/emf-metrics.js';
import { observability } from '../../functions/config/resources.js';
import { synthKoerier, type Synthesised } from './synth.js';

let synth: Synthesised;
let body: string;

/** The dashboard body with CloudFormation references as `<ref>`. */
function dashboardBody(resources: Synthesised['resources']): string {
  const dashboards = Object.values(resources).filter((resource) => resource.Type === 'AWS::CloudWatch::Dashboard');
  expect(dashboards).toHaveLength(1);
  const value = dashboards[0]!.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  if (typeof value === 'string') return value;
  return value['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : '<ref>')).join('');
}

interface Widget {
  readonly properties: { readonly title: string; readonly metrics?: unknown[][] };
}

/** Every EMF directive the adapter writes for one call of each port method: namespace, dimension names and values, metric names. */
function emfDirectives(stack: string) {
  const lines: string[] = [];
  const metrics = new EmfMetrics(stack, (line) => lines.push(line));
  metrics.eventsAccepted(3);
  metrics.publishRejected('invalid-event');
  metrics.eventsRouted({ routed: 2, duplicates: 1, deliveries: 2 });
  metrics.deliveryAttempted({ subscriptionId: 'sub-1', outcome: 'delivered', latencyMs: 40 });
  metrics.deadLettered('sub-1', 'gone');
  metrics.replayProgress('sub-1', { scanned: 10, matched: 4, sent: 4, failed: 0 });
  metrics.awsRequestThrottled('DynamoDB', 'PutItem');
  metrics.flush();
  return lines.map((line) => {
    const record = JSON.parse(line) as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
    };
    const [directive] = record._aws.CloudWatchMetrics;
    const dimensions = directive!.Dimensions[0]!;
    return {
      namespace: directive!.Namespace,
      dimensions: Object.fromEntries(dimensions.map((name) => [name, String(record[name])])),
      names: directive!.Metrics.map((metric) => metric.Name),
    };
  });
}

beforeAll(() => {
  synth = synthKoerier();
  body = dashboardBody(synth.resources);
});

describe('the CloudWatch dashboard', () => {
  it('is named after the stack, so a second stack in the account gets a dashboard of its own', () => {
    const [dashboard] = Object.values(synth.resources).filter(
      (resource) => resource.Type === 'AWS::CloudWatch::Dashboard',
    );
    expect(dashboard!.Properties.DashboardName).toBe(`${synth.stack.stackName}-koerier`);
  });

  it('CARD-5: graphs every figure the functions write, on the dimensions they write it with, under this stack only', () => {
    const widgets = (JSON.parse(body) as { widgets: Widget[] }).widgets;
    const series = widgets.flatMap((widget) => widget.properties.metrics ?? []);
    const stack = synth.stack.stackName;
    const directives = emfDirectives(stack);
    // Every metric name of the port is written by the adapter …
    expect(new Set(directives.flatMap((directive) => directive.names))).toEqual(
      new Set(Object.values(observability.metrics)),
    );
    for (const { namespace, dimensions, names } of directives) {
      expect(namespace).toBe(observability.namespace);
      expect(dimensions).toMatchObject({ service: observability.service, Stack: stack });
      const extra = Object.keys(dimensions).filter((name) => name !== 'service' && name !== 'Stack');
      for (const name of names) {
        // … and read by the dashboard: a metric with exactly its dimensions (a fixed value set),
        const explicit = series.some((entry) => {
          if (entry[0] !== namespace || entry[1] !== name) return false;
          const pairs = entry.slice(2).filter((part) => typeof part === 'string') as string[];
          const given = Object.fromEntries(
            pairs.flatMap((part, index) => (index % 2 === 0 ? [[part, pairs[index + 1]]] : [])),
          );
          return (
            given['service'] === observability.service &&
            given['Stack'] === stack &&
            Object.keys(given).length === 2 + extra.length
          );
        });
        // or a SEARCH over this stack's series of that dimension set (values not known at synth).
        const schema = `{${namespace},${['service', 'Stack', ...extra].join(',')}} MetricName=\\"${name}\\" Stack=\\"${stack}\\"`;
        const searched = body.includes(schema) || JSON.stringify(series).includes(schema);
        expect(explicit || searched, `${name} on ${JSON.stringify(dimensions)}`).toBe(true);
      }
    }
  });

  it('shows the queues and every function next to the figures', () => {
    const titles = (JSON.parse(body) as { widgets: Widget[] }).widgets.map((widget) => widget.properties.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        'Queues: age of the oldest message (s)',
        'Functions: errors (left), p99 duration in ms (right)',
      ]),
    );
    const functions = [...synth.stack.functions.keys()];
    for (const name of functions) expect(body).toContain(`"label":"${name}"`);
    for (const name of synth.stack.queues.byName.keys()) expect(body).toContain(`"label":"${name}-dlq"`);
  });
});
