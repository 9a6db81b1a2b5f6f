/**
 * `npm run docs:generate` (issue 31 items 2 and 3): synthesizes the documented deployment (without
 * bundling the functions) and writes the settings table and resource inventory of docs/DEPLOYING.md
 * and the idle month of docs/COST.md (lib/documents/generate.ts), and the retention table of
 * docs/PRIVACY.md (lib/documents/retention-table.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { documentedDeploymentContext, generatedSections, withGeneratedSections } from '../lib/documents/generate.js';
import type { TemplateJson } from '../lib/documents/deployed-inventory.js';
import type { LogVolume } from '../lib/documents/idle-month.js';
import { withMarkedSection } from '../lib/documents/marked-sections.js';
import { renderRetentionTable } from '../lib/documents/retention-table.js';
import { KoerierStack, REPO_ROOT } from '../lib/koerier-stack.js';
import { readStackConfig } from '../lib/stack-config.js';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const cdkJson = JSON.parse(read('cdk.json')) as { context: Record<string, unknown> };
const app = new App({
  context: { ...cdkJson.context, ...documentedDeploymentContext, 'aws:cdk:bundling-stacks': [] },
});
const config = readStackConfig(app);
const stack = new KoerierStack(app, config.stackName, { config });
const template = app.synth().getStackByName(stack.stackName).template as TemplateJson;
const logs = JSON.parse(read('bench/results/log-volume.json')) as LogVolume;
const documents = withGeneratedSections(
  { deploying: read('docs/DEPLOYING.md'), cost: read('docs/COST.md') },
  generatedSections(template, logs),
);
writeFileSync(path.join(REPO_ROOT, 'docs/DEPLOYING.md'), documents.deploying);
writeFileSync(path.join(REPO_ROOT, 'docs/COST.md'), documents.cost);
// Issue 31 item 5: PRIVACY.md's retention table, from the code's own retention figures (lib/documents/retention-table.ts).
writeFileSync(
  path.join(REPO_ROOT, 'docs/PRIVACY.md'),
  withMarkedSection(read('docs/PRIVACY.md'), 'retention-table', renderRetentionTable()),
);
console.log(
  'docs/DEPLOYING.md (settings table, resource inventory), docs/COST.md (idle month) and docs/PRIVACY.md (retention table) written',
);
