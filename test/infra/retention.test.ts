/**
 * Issue 31 items 4 and 5: every place event data rests has a stated retention the stack enforces.
 * The synthesized template (no bundling) must enforce what docs/PRIVACY.md's retention table
 * states by default and follow the settings when they change, and the table in the file must be
 * the one the code's figures make (`npm run docs:generate`).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { queues, tables } from '../../functions/config/resources.js';
import { PULL_LIMITS } from '../../functions/core/subscriptions/subscription.js';
import { renderRetentionTable, retentionRows } from '../../lib/documents/retention-table.js';
import { markedSection } from '../../lib/documents/marked-sections.js';
import { REPO_ROOT } from '../../lib/koerier-stack.js';
import { LOG_RETENTION_PERIODS } from '../../lib/retention-config.js';
import { readStackConfig } from '../../lib/stack-config.js';
import { logicalId, synthKoerier, type Synthesised } from './synth.js';
import { App } from 'aws-cdk-lib';

const DAY = 86400;
const stated = (store: string) => retentionRows().find((row) => row.store.startsWith(store))!.days;

function expirationDays(synth: Synthesised, bucket: 'payloads' | 'archive'): number[] {
  const resource = synth.resources[logicalId(synth.stack, synth.stack.buckets.byName.get(bucket)!)]!;
  const rules = resource.Properties.LifecycleConfiguration.Rules as { ExpirationInDays?: number; Status: string }[];
  return rules.filter((rule) => rule.Status === 'Enabled').flatMap((rule) => rule.ExpirationInDays ?? []);
}

function logGroupRetentions(synth: Synthesised): number[] {
  return Object.values(synth.resources)
    .filter((resource) => resource.Type === 'AWS::Logs::LogGroup')
    .map((resource) => resource.Properties.RetentionInDays as number);
}

function ttlOf(synth: Synthesised, table: 'deliveries' | 'idempotency'): unknown {
  return synth.resources[logicalId(synth.stack, synth.stack.tables.byName.get(table)!.table)]!.Properties
    .TimeToLiveSpecification;
}

function functionEnvironment(synth: Synthesised, name: string): Record<string, unknown> {
  return synth.resources[logicalId(synth.stack, synth.stack.functions.get(name)!.function)]!.Properties.Environment
    .Variables as Record<string, unknown>;
}

describe('PRIV-1, issue 31 item 4: retention enforced by the stack', () => {
  it('PRIV-1, issue 31 item 4: by default the template enforces what the retention table states', () => {
    const synth = synthKoerier({ context: { 'koerier:fixedEgressAddresses': 1 } });
    expect(expirationDays(synth, 'archive')).toEqual([stated('Event archive')]);
    expect(expirationDays(synth, 'payloads')).toEqual([stated('Claim check')]);
    // Dead letters, attempt history, progress and replay records expire by the deliveries table's TTL.
    expect(ttlOf(synth, 'deliveries')).toEqual({ AttributeName: tables.deliveries.ttlAttribute, Enabled: true });
    expect(ttlOf(synth, 'idempotency')).toEqual({ AttributeName: tables.idempotency.ttlAttribute, Enabled: true });
    // Every log group: the functions', the API's access log and the egress flow log.
    const retentions = logGroupRetentions(synth);
    expect(retentions.length).toBeGreaterThan(synth.stack.functions.size);
    expect(new Set(retentions)).toEqual(new Set([stated('Logs')]));
    // Queues: at most 14 days in transit; the erasure's selector at most 4.
    const queueRetentions = Object.values(synth.resources)
      .filter((resource) => resource.Type === 'AWS::SQS::Queue')
      .map((resource) => resource.Properties.MessageRetentionPeriod as number);
    expect(Math.max(...queueRetentions)).toBe(14 * DAY);
    expect(queueRetentions).toContain(queues.erasures.retentionSeconds);
    expect(PULL_LIMITS.retentionSeconds.max).toBeLessThanOrEqual(14 * DAY);
  });

  it('PRIV-1, issue 31 item 4: the settings change what the stack enforces', () => {
    const synth = synthKoerier({
      context: {
        'koerier:archiveRetentionDays': 3,
        'koerier:logRetentionDays': 14,
        'koerier:deadLetterRetentionSeconds': 7 * DAY,
        'koerier:deliveryHistorySeconds': DAY,
      },
    });
    expect(expirationDays(synth, 'archive')).toEqual([3]);
    expect(expirationDays(synth, 'payloads')).toEqual([3 + 15]);
    expect(new Set(logGroupRetentions(synth))).toEqual(new Set([14]));
    // The TTL items' expiry is written by the delivery function from its settings.
    const delivery = functionEnvironment(synth, 'delivery');
    expect(delivery[settingEnv.deadLetterRetentionSeconds]).toBe(String(7 * DAY));
    expect(delivery[settingEnv.deliveryHistorySeconds]).toBe(String(DAY));
    // The erasure worker reads the archive's retention, to reach back as far as it keeps events.
    expect(functionEnvironment(synth, 'erasureWorker')[settingEnv.archiveRetentionDays]).toBe('3');
  });

  it('PRIV-1, issue 31 item 4: a log retention CloudWatch does not offer is refused at synth, naming the periods', () => {
    const app = new App({ context: { 'koerier:logRetentionDays': 10 } });
    expect(() => readStackConfig(app)).toThrow(
      /koerier:logRetentionDays must be one of CloudWatch's periods in days \(1, 3, 5, 7, 14, 30/,
    );
    expect(LOG_RETENTION_PERIODS).not.toContain(10);
  });
});

describe('PRIV-1, issue 31 item 5: the retention table of docs/PRIVACY.md', () => {
  it('PRIV-1, issue 31 item 5: the table in docs/PRIVACY.md is the one the code makes', () => {
    const privacy = readFileSync(path.join(REPO_ROOT, 'docs/PRIVACY.md'), 'utf8');
    expect(markedSection(privacy, 'retention-table')).toBe(renderRetentionTable());
  });

  it('PRIV-1, issue 31 item 5: the table names every store of event data with a figure', () => {
    const stores = retentionRows().map((row) => row.store);
    for (const store of [
      'Event archive',
      'Claim check',
      'Dead letters',
      'Attempt history',
      'Logs',
      'Pull subscription',
    ])
      expect(
        stores.some((name) => name.startsWith(store)),
        store,
      ).toBe(true);
    expect(stated('Dead letters')).toBe(30);
    expect(stated('Attempt history')).toBe(7);
  });
});
