/**
 * Issue 31 items 2 and 3: the documents describe the stack that is deployed. The settings table
 * of docs/DEPLOYING.md is the one list of settings; its resource inventory and COST.md's idle month
 * are what the synthesized template holds (one synth for this file, without bundling). Each test
 * fails when its part of the file was edited by hand or the code changed without
 * `npm run docs:generate`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { inventoryOf, type TemplateJson } from '../../lib/documents/deployed-inventory.js';
import {
  documentedDeploymentContext,
  generatedSections,
  type GeneratedSections,
} from '../../lib/documents/generate.js';
import type { LogVolume } from '../../lib/documents/idle-month.js';
import { markedSection } from '../../lib/documents/marked-sections.js';
import { REPO_ROOT } from '../../lib/koerier-stack.js';
import { runtimeSettings } from '../../lib/runtime-settings.js';
import { settingsCatalogue } from '../../lib/settings-catalogue.js';
import { contextKey } from '../../lib/stack-config.js';
import { synthKoerier } from './synth.js';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const deploying = read('docs/DEPLOYING.md');
const cost = read('docs/COST.md');
const logs = JSON.parse(read('bench/results/log-volume.json')) as LogVolume;

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir)).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(path.join(REPO_ROOT, file)).isDirectory() ? sourceFiles(file) : file.endsWith('.ts') ? [file] : [];
  });
}

describe('CARD-2, issue 31 item 2: one list of settings', () => {
  const listed: ReadonlySet<string> = new Set(settingsCatalogue.map((setting) => setting.key));

  it('issue 31 item 2: every koerier: key lib/ and bin/ name is in the list, and cdk.json gives none outside it', () => {
    const named = new Map<string, string>();
    for (const file of [...sourceFiles('lib'), ...sourceFiles('bin')])
      for (const [key] of read(file).matchAll(/koerier:[A-Za-z]+\b/g)) named.set(key, file);
    expect(named.size).toBeGreaterThan(50);
    // `koerier:stage` is also the tag key the stack writes, and a setting.
    for (const [key, file] of named) expect(listed.has(key), `${key} (named in ${file})`).toBe(true);
    const cdkJson = JSON.parse(read('cdk.json')) as { context: Record<string, unknown> };
    for (const key of Object.keys(cdkJson.context).filter((k) => k.startsWith('koerier:')))
      expect(listed.has(key), key).toBe(true);
  });

  it('issue 31 item 2: the list holds exactly the keys the synth reads, signing keys and client certificate among them', () => {
    const read = [...Object.values(contextKey), ...runtimeSettings.map((setting) => setting.contextKey)];
    expect([...listed].sort()).toEqual([...new Set(read)].sort());
    expect(settingsCatalogue).toHaveLength(listed.size);
    expect(listed).toContain('koerier:signingKeys');
    expect(listed).toContain('koerier:clientCertificateSecretArn');
  });
});

describe('CARD-2, issue 31 items 2 and 3: the generated parts of DEPLOYING.md and COST.md', () => {
  let template: TemplateJson;
  let expected: GeneratedSections;
  beforeAll(() => {
    template = synthKoerier({ context: { ...documentedDeploymentContext } }).template.toJSON() as TemplateJson;
    expected = generatedSections(template, logs);
  }, 240_000);

  it("issue 31 item 2: DEPLOYING.md's settings table is the one the list makes", () => {
    expect(markedSection(deploying, 'settings-table')).toBe(expected.settingsTable);
  });

  it("issue 31 item 3: DEPLOYING.md's resource inventory is the synthesized template's, counted and named", () => {
    expect(markedSection(deploying, 'resource-inventory')).toBe(expected.inventory);
    // The counts, read from the template apart from the renderer.
    const count = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type).length;
    const row = (what: string) =>
      new RegExp(`^\\| ${what.replace(/[()]/g, '\\$&')} \\| (\\d+) \\|`, 'm').exec(expected.inventory)?.[1];
    expect(row('DynamoDB tables')).toBe(String(count('AWS::DynamoDB::Table')));
    expect(row('KMS keys (customer managed)')).toBe(String(count('AWS::KMS::Key')));
    expect(row('CloudWatch alarms')).toBe(String(count('AWS::CloudWatch::Alarm')));
    expect(row('Lambda functions')).toBe(String(count('AWS::Lambda::Function')));
    expect(row('S3 buckets')).toBe(String(count('AWS::S3::Bucket')));
    expect(row('CloudWatch dashboards')).toBe(String(count('AWS::CloudWatch::Dashboard')));
    expect(Number(row('SQS queues')) + Number(row('SQS dead-letter queues'))).toBe(count('AWS::SQS::Queue'));
    expect(Number(row('SQS dead-letter queues'))).toBeGreaterThan(0);
  });

  it("issue 31 item 3: COST.md's idle month prices the template's keys, alarms, dashboard and queue triggers, and the measured log bytes per event", () => {
    expect(markedSection(cost, 'idle-month')).toBe(expected.idleMonth);
    const inventory = inventoryOf(template);
    expect(expected.idleMonth).toContain(
      `| KMS keys (customer managed) | ${inventory.kmsKeys} | $${inventory.kmsKeys}.00 |`,
    );
    expect(expected.idleMonth).toContain(`| CloudWatch alarms (standard resolution) | ${inventory.alarms} |`);
    expect(expected.idleMonth).toContain(`${logs.bytesPerEvent.toLocaleString('en-US')} bytes of log`);
    expect(expected.idleMonth).toContain('bench/results/log-volume.json');
  });
});
