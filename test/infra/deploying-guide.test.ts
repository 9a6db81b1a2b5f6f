/**
 * docs/DEPLOYING.md followed literally (issue 12, item 7): its commands synthesise as written
 * (`synth` for `deploy`, without esbuild bundling), its settings table lists every context key
 * the code reads with the code's defaults, and the README's deploy section points to it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { loadConfig, settingEnv } from '../../functions/config.js';
import { KoerierStack, REPO_ROOT } from '../../lib/koerier-stack.js';
import { runtimeSettings } from '../../lib/runtime-settings.js';
import { contextKey, parseStackConfig, readStackConfig, settingEnvironment } from '../../lib/stack-config.js';
import { cdkJsonContext, type CfnResourceJson } from './synth.js';

const guide = readFileSync(path.join(REPO_ROOT, 'docs/DEPLOYING.md'), 'utf8');
const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/** The `-c key=value` pairs of a shell command as the shell would pass them (single quotes, line continuations). */
function contextOf(command: string): Record<string, string> {
  const words: string[] = [];
  const pattern = /'([^']*)'|(\S+)/g;
  for (const match of command.replace(/\\\n/g, ' ').matchAll(pattern)) words.push(match[1] ?? match[2]!);
  const context: Record<string, string> = {};
  for (let i = 0; i < words.length; i++) {
    if (words[i] !== '-c' && words[i] !== '--context') continue;
    const pair = words[++i]!;
    const equals = pair.indexOf('=');
    context[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return context;
}

/** The shell block after `<!-- documented-command: name -->`. */
function documentedCommand(text: string, name: string): string {
  const match = new RegExp(`<!-- documented-command: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (!match) throw new Error(`no documented command "${name}"`);
  return match[1]!;
}

function settingsTable(): Map<string, { default: string; meaning: string }> {
  const block = /<!-- settings-table:start -->([\s\S]*?)<!-- settings-table:end -->/.exec(guide)![1]!;
  const rows = new Map<string, { default: string; meaning: string }>();
  for (const line of block.split('\n')) {
    const cells = /^\| `(koerier:[A-Za-z]+)` \| (.*?) \| (.*) \|$/.exec(line);
    if (cells) {
      expect(rows.has(cells[1]!), `${cells[1]} listed twice`).toBe(false);
      rows.set(cells[1]!, { default: cells[2]!, meaning: cells[3]! });
    }
  }
  return rows;
}

describe('docs/DEPLOYING.md (issue 12 item 7)', () => {
  it('CARD-2: the settings table lists exactly the context keys the stack reads, each with a meaning', () => {
    const table = settingsTable();
    const read = [...Object.values(contextKey), ...runtimeSettings.map((setting) => setting.contextKey)];
    expect([...table.keys()].sort()).toEqual([...read].sort());
    for (const [key, row] of table) expect(row.meaning.length, key).toBeGreaterThan(20);
  });

  it('CARD-2: the defaults in the table are the ones the code applies', () => {
    const table = settingsTable();
    for (const setting of runtimeSettings) {
      expect(table.get(setting.contextKey)!.default, setting.contextKey).toBe(
        setting.default === undefined ? 'unset' : String(setting.default),
      );
    }
    const minimal = {
      'koerier:issuer': 'https://issuer.example.org',
      'koerier:audience': 'koerier',
      'koerier:jwksUrl': 'https://issuer.example.org/jwks',
      'koerier:allowedOrigins': 'a.example.org',
      'koerier:webhookOrigin': 'koerier.example.org',
      'koerier:publishers': '{"a":["urn:nld:a:"]}',
    };
    const config = parseStackConfig(minimal);
    const functions = loadConfig(settingEnvironment(config, 'https://api.example.org'));
    const startsWith = (key: string, value: string) =>
      expect(table.get(key)!.default.startsWith(value), `${key}: ${table.get(key)!.default}`).toBe(true);
    startsWith(contextKey.stackName, `\`${config.stackName}\``);
    startsWith(contextKey.accessTokenType, `\`${config.accessTokenType}\``);
    startsWith(contextKey.accessTokenMaxLifetimeMinutes, String(config.accessTokenMaxLifetimeMinutes));
    startsWith(contextKey.clientIdClaim, `\`${config.clientIdClaim}\``);
    startsWith(contextKey.scopeClaims, `\`${config.scopeClaims.join(',')}\``);
    startsWith(contextKey.sinkCredentials, `\`${config.sinkCredentials}\``);
    startsWith(contextKey.outboundPorts, `\`${JSON.stringify(config.outboundPorts)}\``);
    startsWith(contextKey.idempotencyTtlDays, String(config.idempotencyTtlDays));
    startsWith(contextKey.publishRatePerMinute, String(functions.publishRatePerMinute));
    startsWith(contextKey.inlineEventBytes, String(functions.inlineEventBytes));
    startsWith(contextKey.maxEventBytes, String(functions.maxEventBytes));
    startsWith(contextKey.manageRatePerMinute, String(functions.manageRatePerMinute));
    startsWith(contextKey.ingestReservedConcurrency, String(config.protection.ingestReservedConcurrency));
    startsWith(contextKey.pullReservedConcurrency, String(config.protection.pullReservedConcurrency));
    startsWith(
      contextKey.routeThrottling,
      Object.entries(config.protection.routeThrottling)
        .map(([name, limits]) => `${name} ${limits.rateLimit}/${limits.burstLimit}`)
        .join(', '),
    );
    startsWith(contextKey.edgeProtection, `\`${config.protection.edge.mode}\``);
    startsWith(
      contextKey.batchingWindowSeconds,
      Object.entries(config.batchingWindowSeconds)
        .map(([name, seconds]) => `${name} ${seconds}`)
        .join(', '),
    );
    startsWith(
      contextKey.batchSizes,
      Object.entries(config.batchSizes)
        .map(([name, size]) => `${name} ${size}`)
        .join(', '),
    );
    startsWith(contextKey.tokenUrl, "the preset's, else `<issuer>/oauth/token`");
    expect(functions.auth.tokenUrl).toBe('https://issuer.example.org/oauth/token');
    for (const key of [
      contextKey.issuer,
      contextKey.audience,
      contextKey.allowedOrigins,
      contextKey.webhookOrigin,
      contextKey.publishers,
    ])
      startsWith(key, 'required');
  });

  it("CARD-2: the test-stack command, run as cdk runs bin/koerier.ts, synthesises Koerier-test with the realm's own JWKS and token URL", () => {
    const documented = contextOf(documentedCommand(guide, 'test'));
    expect(documentedCommand(guide, 'test')).toMatch(/^npx cdk deploy \\/);
    const out = mkdtempSync(path.join(tmpdir(), 'koerier-guide-'));
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bin/koerier.ts')], {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJsonContext, ...documented, 'aws:cdk:bundling-stacks': [] }),
          CDK_OUTDIR: out,
        },
        encoding: 'utf8',
        timeout: 200_000,
      });
      expect(run.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'))).toEqual([]);
      expect(run.status).toBe(0);
      const template = JSON.parse(readFileSync(path.join(out, 'Koerier-test.template.json'), 'utf8')) as {
        Resources: Record<string, CfnResourceJson>;
      };
      const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function')!;
      expect(fn.Properties.Environment.Variables).toMatchObject({
        [settingEnv.issuer]: 'https://login.example.org/realms/koerier',
        [settingEnv.jwksUrl]: 'https://login.example.org/realms/koerier/protocol/openid-connect/certs',
        [settingEnv.tokenUrl]: 'https://login.example.org/realms/koerier/protocol/openid-connect/token',
        [settingEnv.stackName]: 'Koerier-test',
      });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240_000);

  it('CARD-2: the production command synthesises Koerier-prod with the Entra ID rules', () => {
    const app = new App({
      context: { ...cdkJsonContext, ...contextOf(documentedCommand(guide, 'prod')), 'aws:cdk:bundling-stacks': [] },
    });
    const config = readStackConfig(app);
    const stack = new KoerierStack(app, config.stackName, { config });
    expect(stack.stackName).toBe('Koerier-prod');
    const fn = Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, CfnResourceJson>).find(
      (r) => r.Type === 'AWS::Lambda::Function',
    )!;
    expect(fn.Properties.Environment.Variables).toMatchObject({
      [settingEnv.accessTokenType]: 'JWT',
      [settingEnv.clientIdClaim]: 'azp',
      [settingEnv.scopeClaims]: 'roles',
      [settingEnv.tokenUrl]: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token',
    });
  }, 120_000);

  it("CARD-2: the README's deploy section points to the guide, and its command's token URL belongs to its issuer", () => {
    const section = /## Configuration and deployment \(AWS\)([\s\S]*?)\n## /.exec(readme)![1]!;
    expect(section).toContain('(docs/DEPLOYING.md)');
    const context = contextOf(documentedCommand(section, 'readme'));
    const config = parseStackConfig({ ...cdkJsonContext, ...context });
    expect(config.tokenUrl!.startsWith(`${config.issuer}/`)).toBe(true);
    expect(config.jwksUrl.startsWith(`${config.issuer}/`)).toBe(true);
  });
});
