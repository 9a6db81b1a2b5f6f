/**
 * Issue 12, items 1 and 2: configuration that fails safe. cdk.json has no working values, so a
 * forgotten setting stops the synth with one line naming the key and an example; every tunable
 * is context; presets set up the identity provider; two stacks live side by side in one account.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { KoerierStack, REPO_ROOT } from '../../lib/koerier-stack.js';
import { parseStackConfig, readStackConfig, StackConfigError } from '../../lib/stack-config.js';
import { cdkJsonContext, newApp, synthKoerier, type CfnResourceJson } from './synth.js';

/** The least an operator must give: what docs/DEPLOYING.md asks for. */
const required = {
  'koerier:issuer': 'https://login.example.org/realms/koerier',
  'koerier:audience': 'koerier',
  'koerier:jwksUrl': 'https://login.example.org/realms/koerier/protocol/openid-connect/certs',
  'koerier:allowedOrigins': ['partner.example.org'],
  'koerier:webhookOrigin': 'koerier.example.org',
  'koerier:publishers': { 'partner-lvs': ['urn:nld:oin:00000001823288444000:'] },
};

function messageOf(context: Record<string, unknown>): string {
  try {
    parseStackConfig(context);
  } catch (error) {
    expect(error).toBeInstanceOf(StackConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a StackConfigError');
}

const PREFIX = "Koerier's CDK context is invalid: ";

/** Properties that set a resource's physical name; given as plain text, two stacks would fight over it. */
const PHYSICAL_NAMES = new Set([
  'TableName',
  'QueueName',
  'FunctionName',
  'AlarmName',
  'TopicName',
  'BucketName',
  'AliasName',
  'RoleName',
  'LogGroupName',
]);

/** The environment one function of a synthesised stack gets. */
function environmentOf(resources: Record<string, CfnResourceJson>): Record<string, unknown> {
  const fn = Object.values(resources).find(
    (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.[settingEnv.issuer],
  );
  return fn!.Properties.Environment.Variables;
}

describe('issue 12 item 1: a forgotten or bad setting stops the synth with one line naming the key', () => {
  it('cdk.json carries no issuer, audience, JWKS, origins, publishers or entitlements: nothing works by accident', () => {
    for (const key of [
      ...Object.keys(required),
      'koerier:tokenUrl',
      'koerier:entitlements',
      'koerier:clientIdClaim',
      'koerier:accessTokenType',
    ]) {
      expect(cdkJsonContext[key], key).toBeUndefined();
    }
    expect(() => readStackConfig(new App({ context: cdkJsonContext }))).toThrow(StackConfigError);
  });

  it.each([
    [
      'koerier:issuer',
      'koerier:issuer is required: a non-empty string, e.g. -c koerier:issuer=https://login.example.org/realms/koerier, got nothing',
    ],
    [
      'koerier:audience',
      'koerier:audience is required: a non-empty string, e.g. -c koerier:audience=koerier, got nothing',
    ],
    [
      'koerier:jwksUrl',
      'koerier:jwksUrl is required: a non-empty string, e.g. -c koerier:jwksUrl=https://login.example.org/realms/koerier/protocol/openid-connect/certs, got nothing',
    ],
    [
      'koerier:allowedOrigins',
      'koerier:allowedOrigins is required: a non-empty list of origins (or "*"), e.g. -c koerier:allowedOrigins=events.partner.example.org, got nothing',
    ],
    [
      'koerier:webhookOrigin',
      'koerier:webhookOrigin is required: a non-empty string, e.g. -c koerier:webhookOrigin=koerier.example.org, got nothing',
    ],
    [
      'koerier:publishers',
      'koerier:publishers is required: an object {"<client id>": ["<source grant>", ...]}, e.g. -c koerier:publishers=\'{"partner-lvs":["urn:nld:oin:00000001823288444000:"]}\', got nothing',
    ],
  ])('CARD-2: without %s the synth says exactly which key and what it looks like', (key, message) => {
    const context: Record<string, unknown> = { ...required };
    delete context[key];
    expect(messageOf(context)).toBe(PREFIX + message);
  });

  it.each([
    [
      { 'koerier:stackName': 'koerier_test' },
      'koerier:stackName must be a CloudFormation stack name (a letter, then letters, digits and dashes, at most 100), e.g. -c koerier:stackName=Koerier-test, got "koerier_test"',
    ],
    [
      { 'koerier:stage': 'Prod' },
      'koerier:stage must be lower-case letters, digits and dashes, at most 16, e.g. -c koerier:stage=test, got "Prod"',
    ],
    [
      { 'koerier:identityProvider': 'okta' },
      'koerier:identityProvider must be "keycloak", "entra-id", "edukoppeling" or left out, got "okta"',
    ],
    [
      { 'koerier:scopeClaims': ['groups'] },
      'koerier:scopeClaims must name claims among scope, scp, roles, e.g. ["roles"], got ["groups"]',
    ],
    [
      { 'koerier:identityProvider': 'edukoppeling', 'koerier:sinkCredentials': 'bearer-or-oauth2' },
      'koerier:sinkCredentials must be "oauth2-only" with koerier:identityProvider "edukoppeling" (its profile asks OAuth2 towards every party), got "bearer-or-oauth2"',
    ],
    [
      { 'koerier:deliveryRetryWindowSeconds': 14 * 24 * 3600 },
      'koerier:deliveryRetryWindowSeconds must be a whole number from 60 to 1123200, e.g. -c koerier:deliveryRetryWindowSeconds=86400, got 1209600',
    ],
    [
      { 'koerier:deliveryBreakerFailures': '0' },
      'koerier:deliveryBreakerFailures must be a whole number from 1 to 1000, e.g. -c koerier:deliveryBreakerFailures=5, got "0"',
    ],
    [
      { 'koerier:validationWindowSeconds': 'a day' },
      'koerier:validationWindowSeconds must be a whole number from 60 to 2592000, e.g. -c koerier:validationWindowSeconds=86400, got "a day"',
    ],
    [
      { 'koerier:webhookRequestRate': 0 },
      'koerier:webhookRequestRate must be a whole number from 1 to 1000000, e.g. -c koerier:webhookRequestRate=1, got 0',
    ],
    [
      { 'koerier:batchingWindowSeconds': { router: 301 } },
      'koerier:batchingWindowSeconds of "router" must be a whole number of seconds from 0 to 300, got 301',
    ],
    [
      { 'koerier:batchingWindowSeconds': { ingest: 1 } },
      'koerier:batchingWindowSeconds names "ingest", which is no queue-triggered function (router, delivery, alerts, replayWorker, erasureWorker)',
    ],
    [
      { 'koerier:batchingWindowSeconds': 5 },
      'koerier:batchingWindowSeconds must be an object of seconds per function, e.g. {"router": 1, "delivery": 0}, got 5',
    ],
    [
      { 'koerier:batchSizes': { router: 101 } },
      'koerier:batchSizes of "router" must be a whole number of messages from 1 to 100, got 101',
    ],
    [
      { 'koerier:batchSizes': { router: 0 } },
      'koerier:batchSizes of "router" must be a whole number of messages from 1 to 100, got 0',
    ],
    [
      { 'koerier:batchSizes': { delivery: 20 } },
      'koerier:batchSizes names "delivery", whose batch size is fixed: only router can be set',
    ],
    [
      { 'koerier:batchSizes': { replayWorker: 100 } },
      'koerier:batchSizes names "replayWorker", whose batch size is fixed: only router can be set',
    ],
    [
      { 'koerier:batchSizes': { router: 100 }, 'koerier:batchingWindowSeconds': { router: 0 } },
      'koerier:batchSizes of "router" is 100, and SQS gives a function more than 10 messages only with a batching window of at least 1 second (koerier:batchingWindowSeconds of "router" is 0)',
    ],
    [
      { 'koerier:batchSizes': { pull: 10 } },
      'koerier:batchSizes names "pull", which is no queue-triggered function (router, delivery, alerts, replayWorker, erasureWorker)',
    ],
  ])('CARD-2: a bad value is one exact line naming its key: %j', (bad, message) => {
    const text = messageOf({ ...required, ...bad });
    expect(text).toBe(PREFIX + message);
    expect(text).not.toContain('\n');
  });

  it('CARD-2, issue 31 item 2: bin/koerier.ts, run as cdk runs it with only cdk.json, prints one line per missing setting on stderr and exits 1 — no stack trace', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'koerier-synth-'));
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bin/koerier.ts')], {
        cwd: REPO_ROOT,
        env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(cdkJsonContext), CDK_OUTDIR: out },
        encoding: 'utf8',
        timeout: 200_000,
      });
      expect(run.status).toBe(1);
      const lines = run.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));
      expect(lines[0]).toBe("Koerier's CDK context is invalid (6 problems):");
      expect(lines.slice(1).map((line) => /^ {2}(koerier:\w+) is required: /.exec(line)?.[1])).toEqual([
        'koerier:issuer',
        'koerier:audience',
        'koerier:jwksUrl',
        'koerier:webhookOrigin',
        'koerier:allowedOrigins',
        'koerier:publishers',
      ]);
      expect(lines[1]).toMatch(/e\.g\. -c koerier:issuer=https:\/\//);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('issue 12 item 1: every tunable is context, validated, and reaches the functions', () => {
  it('CARD-2: retry schedule, breaker, suspension, validation window and request rate set as context arrive as function settings', () => {
    const { resources } = synthKoerier({
      context: {
        'koerier:deliveryRetryInitialSeconds': 10,
        'koerier:deliveryRetryMaxDelaySeconds': '600',
        'koerier:deliveryRetryWindowSeconds': 7200,
        'koerier:deliveryBreakerFailures': 3,
        'koerier:deliveryBreakerCooldownSeconds': 30,
        'koerier:deliverySuspendAfterSeconds': 86_400,
        'koerier:validationWindowSeconds': 3600,
        'koerier:webhookRequestRate': 120,
      },
    });
    expect(environmentOf(resources)).toMatchObject({
      [settingEnv.deliveryRetryInitialSeconds]: '10',
      [settingEnv.deliveryRetryMaxDelaySeconds]: '600',
      [settingEnv.deliveryRetryWindowSeconds]: '7200',
      [settingEnv.deliveryBreakerFailures]: '3',
      [settingEnv.deliveryBreakerCooldownSeconds]: '30',
      [settingEnv.deliverySuspendAfterSeconds]: '86400',
      [settingEnv.validationWindowSeconds]: '3600',
      [settingEnv.webhookRequestRate]: '120',
    });
  });

  it('CARD-2: the batching windows of the queue-triggered functions are context, and reach their SQS event sources', () => {
    const windows = (context: Record<string, unknown>) =>
      Object.values(synthKoerier({ context }).resources)
        .filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping')
        .map((r) => r.Properties.MaximumBatchingWindowInSeconds ?? 0)
        .sort();
    // router 1, delivery 0, alerts 30, replayWorker 0, erasureWorker 0 by default.
    expect(windows({})).toEqual([0, 0, 0, 1, 30]);
    expect(
      windows({
        'koerier:batchingWindowSeconds': { router: 5, delivery: 2, alerts: 4, replayWorker: 3, erasureWorker: 6 },
      }),
    ).toEqual([2, 3, 4, 5, 6]);
  });

  it('issue 15 #3: the batch sizes of the queue-triggered functions are context, and reach their SQS event sources with their windows', () => {
    const mappings = (context: Record<string, unknown>) =>
      Object.values(synthKoerier({ context }).resources)
        .filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping')
        .map((r) => [r.Properties.BatchSize, r.Properties.MaximumBatchingWindowInSeconds ?? 0])
        .sort((a, b) => Number(a[0]) - Number(b[0]) || Number(a[1]) - Number(b[1]));
    // router 10 (window 1 s), delivery 10, alerts 100 (window 30 s), replayWorker 1, erasureWorker 1 by default.
    expect(mappings({})).toEqual([
      [1, 0],
      [1, 0],
      [10, 0],
      [10, 1],
      [100, 30],
    ]);
    expect(mappings({ 'koerier:batchSizes': { router: 100 } })).toEqual([
      [1, 0],
      [1, 0],
      [10, 0],
      [100, 1],
      [100, 30],
    ]);
  });
});

describe('issue 12 item 2: identity provider presets', () => {
  // The test context names the token rules explicitly; a preset fills only what is left out.
  const bare = {
    'koerier:jwksUrl': undefined,
    'koerier:tokenUrl': undefined,
    'koerier:accessTokenType': undefined,
    'koerier:clientIdClaim': undefined,
    'koerier:accessTokenMaxLifetimeMinutes': undefined,
  };
  const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';

  it.each([
    [
      'keycloak',
      'https://login.example.org/realms/partners',
      {
        KOERIER_ACCESS_TOKEN_TYPE: 'JWT',
        KOERIER_CLIENT_ID_CLAIM: 'azp',
        KOERIER_SCOPE_CLAIMS: 'scope',
        KOERIER_JWKS_URL: 'https://login.example.org/realms/partners/protocol/openid-connect/certs',
        KOERIER_TOKEN_URL: 'https://login.example.org/realms/partners/protocol/openid-connect/token',
      },
    ],
    [
      'entra-id',
      `https://login.microsoftonline.com/${tenant}/v2.0`,
      {
        KOERIER_ACCESS_TOKEN_TYPE: 'JWT',
        KOERIER_CLIENT_ID_CLAIM: 'azp',
        KOERIER_SCOPE_CLAIMS: 'roles',
        KOERIER_JWKS_URL: `https://login.microsoftonline.com/${tenant}/discovery/v2.0/keys`,
        KOERIER_TOKEN_URL: `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
      },
    ],
    [
      'entra-id',
      `https://sts.windows.net/${tenant}/`,
      { KOERIER_ACCESS_TOKEN_TYPE: 'JWT', KOERIER_CLIENT_ID_CLAIM: 'appid', KOERIER_SCOPE_CLAIMS: 'roles' },
    ],
  ])(
    'EDU-2: koerier:identityProvider=%s with issuer %s sets the token rules and the endpoints in the synthesised functions',
    (provider, issuer, expected) => {
      const { resources } = synthKoerier({
        context: { ...bare, 'koerier:identityProvider': provider, 'koerier:issuer': issuer },
      });
      expect(environmentOf(resources)).toMatchObject({ ...expected, KOERIER_ISSUER: issuer });
    },
  );

  it('EDU-2, EDU-4, EDU-3: koerier:identityProvider=edukoppeling keeps RFC 9068 as written, drops the handshake for directory partners, and needs its JWKS named', () => {
    const { resources } = synthKoerier({
      context: {
        ...bare,
        'koerier:identityProvider': 'edukoppeling',
        'koerier:jwksUrl': 'https://idp.example.org/jwks',
      },
    });
    expect(environmentOf(resources)).toMatchObject({
      KOERIER_ACCESS_TOKEN_TYPE: 'at+jwt',
      KOERIER_CLIENT_ID_CLAIM: 'client_id',
      KOERIER_SCOPE_CLAIMS: 'scope',
      KOERIER_SINK_CREDENTIALS: 'oauth2-only',
      // The profile drops abuse protection (rule 3f): a partner's OAuth2 grant is its consent.
      KOERIER_VALIDATION_HANDSHAKE: 'agreed-for-directory-partners',
    });
    expect(
      messageOf({ ...required, 'koerier:jwksUrl': undefined, 'koerier:identityProvider': 'edukoppeling' }),
    ).toMatch(/^Koerier's CDK context is invalid: koerier:jwksUrl is required/);
  });

  it('EDU-2: what the deployment names explicitly wins over the preset', () => {
    const config = parseStackConfig({
      ...required,
      'koerier:identityProvider': 'entra-id',
      'koerier:issuer': `https://login.microsoftonline.com/${tenant}/v2.0`,
      'koerier:jwksUrl': 'https://keys.example.org/jwks',
      'koerier:clientIdClaim': 'appid',
      'koerier:scopeClaims': 'scp,roles',
      'koerier:accessTokenType': 'at+jwt',
    });
    expect(config).toMatchObject({
      jwksUrl: 'https://keys.example.org/jwks',
      clientIdClaim: 'appid',
      scopeClaims: ['scp', 'roles'],
      accessTokenType: 'at+jwt',
    });
    expect(config.tokenUrl).toBe(`https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`);
  });
});

describe('issue 12 item 1: test and production side by side', () => {
  it('CARD-2: two stacks with different names synthesise in one app, cdk-nag clean, with no physical name, export or metric of one reaching the other', () => {
    const app = newApp();
    const stacks = ['test', 'prod'].map((stage) => {
      const config = readStackConfig(new App({ context: { ...app.node.getAllContext(), 'koerier:stage': stage } }));
      return new KoerierStack(app, config.stackName, { config });
    });
    expect(stacks.map((stack) => stack.stackName)).toEqual(['Koerier-test', 'Koerier-prod']);
    const report = new AwsSolutionsChecks(app).validateScope(app);
    expect(
      report.violations.filter((violation) => violation.severity === 'error' || violation.severity === 'warning'),
    ).toEqual([]);

    const templates = stacks.map((stack) => Template.fromStack(stack).toJSON());
    for (const [index, template] of templates.entries()) {
      // CloudFormation names everything from the stack name: no fixed name a second stack would collide with.
      const fixedNames = Object.entries(template.Resources as Record<string, CfnResourceJson>).flatMap(
        ([id, resource]) =>
          Object.entries(resource.Properties ?? {})
            .filter(([property, value]) => PHYSICAL_NAMES.has(property) && typeof value === 'string')
            .map(([property]) => `${id}.${property}`),
      );
      expect(fixedNames).toEqual([]);
      const api = Object.values(template.Resources as Record<string, CfnResourceJson>).find(
        (r) => r.Type === 'AWS::ApiGatewayV2::Api',
      );
      expect(api!.Properties.Name).toBe(stacks[index]!.stackName);
      expect(Object.values(template.Outputs ?? {}).filter((output) => (output as { Export?: unknown }).Export)).toEqual(
        [],
      );
      // The delivery alarms watch their own stack's metrics only.
      const alarms = Object.values(template.Resources as Record<string, CfnResourceJson>).filter(
        (r) => r.Type === 'AWS::CloudWatch::Alarm',
      );
      const dimensions = JSON.stringify(alarms.map((alarm) => [alarm.Properties.Dimensions, alarm.Properties.Metrics]));
      expect(dimensions).toContain(`{"Name":"Stack","Value":"${stacks[index]!.stackName}"}`);
      expect(dimensions).not.toContain(`"Value":"${stacks[1 - index]!.stackName}"`);
      const fn = Object.values(template.Resources as Record<string, CfnResourceJson>).find(
        (r) => r.Type === 'AWS::Lambda::Function',
      );
      expect(fn!.Properties.Environment.Variables[settingEnv.stackName]).toBe(stacks[index]!.stackName);
      expect(template.Description).toContain(`stage ${['test', 'prod'][index]}`);
    }
    expect(() => app.synth()).not.toThrow();
  }, 240_000);

  it('CARD-2: koerier:stackName overrides the name the stage gives', () => {
    expect(
      parseStackConfig({ ...required, 'koerier:stage': 'acc', 'koerier:stackName': 'KoerierAcceptatie' }),
    ).toMatchObject({
      stackName: 'KoerierAcceptatie',
      stage: 'acc',
    });
    expect(parseStackConfig(required).stackName).toBe('Koerier');
  });
});
