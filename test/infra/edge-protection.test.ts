/**
 * Review #20 in the stack: reserved concurrency for the ingest, API Gateway limits per route, and
 * the optional CloudFront + AWS WAF edge (`koerier:edgeProtection`), on and off, with cdk-nag.
 */
import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { ORIGIN_VERIFY_HEADER } from '../../functions/app/origin-guard.js';
import { COUNT_ONLY_COMMON_RULES, EDGE_RATE_WINDOW_SECONDS } from '../../lib/constructs/edge-protection.js';
import { STAGE_THROTTLE } from '../../lib/constructs/http-api.js';
import { addComplianceChecks } from '../../lib/checks.js';
import { KoerierStack } from '../../lib/koerier-stack.js';
import {
  DEFAULT_EDGE_RATE_LIMITS,
  DEFAULT_INGEST_RESERVED_CONCURRENCY,
  DEFAULT_PULL_RESERVED_CONCURRENCY,
  DEFAULT_ROUTE_THROTTLING,
} from '../../lib/protection-config.js';
import { functions, servedPath } from '../../functions/config/resources.js';
import { readStackConfig } from '../../lib/stack-config.js';
import { acknowledgementsIn, unacknowledgedFindings, unjustifiedAcknowledgements } from './cdk-nag-review.js';
import {
  ACCEPT_CLOUDFRONT_DEFAULT_CERTIFICATE,
  buildKoerier,
  logicalId,
  newApp,
  referencedIds,
  synthKoerier,
  type CfnResourceJson,
} from './synth.js';

const ENV = { account: '123456789012', region: 'eu-west-1' } as const;
// On the cloudfront.net name, accepted in writing (EDU-4; test/infra/cloudfront-tls.test.ts gives it a name).
const EDGE_ON = { 'koerier:edgeProtection': 'cloudfront-waf', ...ACCEPT_CLOUDFRONT_DEFAULT_CERTIFICATE } as const;

interface Built {
  readonly app: App;
  readonly stack: KoerierStack;
  readonly resources: Record<string, CfnResourceJson>;
  readonly edgeResources: Record<string, CfnResourceJson>;
}

/** `env: null` builds an environment-agnostic stack, as `cdk synth` without credentials does. */
function build(context: Record<string, unknown>, env: { account: string; region: string } | null = ENV): Built {
  const app = newApp(context);
  const stack = new KoerierStack(app, 'Koerier', { config: readStackConfig(app), ...(env ? { env } : {}) });
  const resources = Template.fromStack(stack).toJSON().Resources as Record<string, CfnResourceJson>;
  const edgeResources = stack.edgeStack
    ? (Template.fromStack(stack.edgeStack).toJSON().Resources as Record<string, CfnResourceJson>)
    : {};
  return { app, stack, resources, edgeResources };
}

const ofType = (resources: Record<string, CfnResourceJson>, type: string) =>
  Object.values(resources).filter((r) => r.Type === type);
const fnResource = (built: Built, name: string) =>
  built.resources[logicalId(built.stack, built.stack.functions.get(name)!.function)]!;
const stageOf = (resources: Record<string, CfnResourceJson>) => ofType(resources, 'AWS::ApiGatewayV2::Stage')[0]!;
const routeKeysOf = (name: 'ingest' | 'subscriptions' | 'deliveryAdmin' | 'payloads') =>
  functions[name].routes.map((r) => `${r.method} ${servedPath(r.path)}`);

/** A WAF rule as the template has it (CloudFormation JSON, navigated freely). */
interface WafRule {
  readonly Name: string;
  readonly Priority: number;
  readonly Statement: CfnResourceJson['Properties'];
  readonly Action?: CfnResourceJson['Properties'];
  readonly OverrideAction?: CfnResourceJson['Properties'];
}

describe('review #20: reserved concurrency and route throttling (edge protection off, the default)', () => {
  let built: Built;
  beforeAll(() => {
    built = build({});
  });

  it('review #20: the ingest and the pull function (its long polls) have their reserved concurrency, and no other function reserves any', () => {
    expect(fnResource(built, 'ingest').Properties.ReservedConcurrentExecutions).toBe(
      DEFAULT_INGEST_RESERVED_CONCURRENCY,
    );
    expect(fnResource(built, 'pull').Properties.ReservedConcurrentExecutions).toBe(DEFAULT_PULL_RESERVED_CONCURRENCY);
    for (const name of built.stack.functions.keys()) {
      if (name !== 'ingest' && name !== 'pull')
        expect(fnResource(built, name).Properties.ReservedConcurrentExecutions, name).toBeUndefined();
    }
  });

  it('review #20: every route of the ingest, subscriptions and delivery-admin functions gets its own API Gateway limit; the rest keep the stage default', () => {
    const stage = stageOf(built.resources);
    expect(stage.Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: STAGE_THROTTLE.rateLimit,
      ThrottlingBurstLimit: STAGE_THROTTLE.burstLimit,
    });
    const expected: Record<string, unknown> = {};
    // And the claim check's routes (payloads, EDU-1); the title stays as docs/HARDENING.md quotes it.
    for (const name of ['ingest', 'subscriptions', 'deliveryAdmin', 'payloads'] as const) {
      for (const key of routeKeysOf(name)) {
        expected[key] = {
          ThrottlingRateLimit: DEFAULT_ROUTE_THROTTLING[name]!.rateLimit,
          ThrottlingBurstLimit: DEFAULT_ROUTE_THROTTLING[name]!.burstLimit,
        };
      }
    }
    expect(stage.Properties.RouteSettings).toEqual(expected);
    expect(stage.Properties.RouteSettings['GET /openapi.json']).toBeUndefined();
    // Every route with settings exists before the stage that names it (API Gateway refuses them otherwise).
    const routeIds = Object.entries(built.resources)
      .filter(([, r]) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.RouteKey in expected)
      .map(([id]) => id);
    expect(routeIds).toHaveLength(Object.keys(expected).length);
    const stageJson = Object.values(
      Template.fromStack(built.stack).toJSON().Resources as Record<string, { Type: string; DependsOn?: string[] }>,
    ).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage')!;
    expect(stageJson.DependsOn).toEqual(expect.arrayContaining(routeIds));
  });

  it('review #20: no CloudFront, WAF, secret or us-east-1 stack, no origin secret in the functions, and the API URL is the API Gateway endpoint', () => {
    expect(built.stack.edgeStack).toBeUndefined();
    expect(built.stack.edge).toBeUndefined();
    for (const type of ['AWS::CloudFront::Distribution', 'AWS::WAFv2::WebACL', 'AWS::SecretsManager::Secret'])
      expect(ofType(built.resources, type), type).toEqual([]);
    for (const fn of ofType(built.resources, 'AWS::Lambda::Function')) {
      expect(fn.Properties.Environment.Variables[settingEnv.originVerifySecret]).toBeUndefined();
      expect(fn.Properties.Environment.Variables[settingEnv.publicBaseUrl]).toEqual({
        'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(built.stack, built.stack.httpApi.api), 'ApiEndpoint'] }, '/v1']],
      });
    }
    expect(built.app.node.children.filter((c) => c instanceof KoerierStack || c.node.id.endsWith('Edge'))).toHaveLength(
      1,
    );
  });

  it('review #20: the context sets the reserved concurrency ("none" reserves nothing), the route limits and the per-client rates', () => {
    const tuned = build({
      'koerier:ingestReservedConcurrency': 7,
      'koerier:routeThrottling': { ingest: { rateLimit: 40, burstLimit: 80 } },
      'koerier:publishRatePerMinute': 120,
      'koerier:manageRatePerMinute': '30',
    });
    expect(fnResource(tuned, 'ingest').Properties.ReservedConcurrentExecutions).toBe(7);
    const settings = stageOf(tuned.resources).Properties.RouteSettings;
    expect(settings['POST /v1/events']).toEqual({ ThrottlingRateLimit: 40, ThrottlingBurstLimit: 80 });
    expect(settings['POST /v1/subscriptions']).toEqual({
      ThrottlingRateLimit: DEFAULT_ROUTE_THROTTLING['subscriptions']!.rateLimit,
      ThrottlingBurstLimit: DEFAULT_ROUTE_THROTTLING['subscriptions']!.burstLimit,
    });
    for (const fn of ofType(tuned.resources, 'AWS::Lambda::Function')) {
      expect(fn.Properties.Environment.Variables[settingEnv.publishRatePerMinute]).toBe('120');
      expect(fn.Properties.Environment.Variables[settingEnv.manageRatePerMinute]).toBe('30');
    }
    const unreserved = build({
      'koerier:ingestReservedConcurrency': 'none',
      'koerier:pullReservedConcurrency': 'none',
    });
    expect(fnResource(unreserved, 'ingest').Properties.ReservedConcurrentExecutions).toBeUndefined();
    expect(fnResource(unreserved, 'pull').Properties.ReservedConcurrentExecutions).toBeUndefined();
    expect(
      fnResource(build({ 'koerier:pullReservedConcurrency': 3 }), 'pull').Properties.ReservedConcurrentExecutions,
    ).toBe(3);
  });
});

describe('review #20: koerier:edgeProtection "cloudfront-waf"', () => {
  let built: Built;
  beforeAll(() => {
    built = build(EDGE_ON);
  });

  it('review #20: the web ACL has scope CLOUDFRONT and lives in its own us-east-1 stack, which the Koerier stack depends on', () => {
    const edgeStack = built.stack.edgeStack!;
    expect(edgeStack.region).toBe('us-east-1');
    expect(edgeStack.account).toBe(ENV.account);
    expect(built.stack.dependencies).toContain(edgeStack);
    const [acl, ...others] = ofType(built.edgeResources, 'AWS::WAFv2::WebACL');
    expect(others).toEqual([]);
    expect(acl!.Properties).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    expect(ofType(built.resources, 'AWS::WAFv2::WebACL')).toEqual([]);
  });

  it('review #20, EDU-20: rate rules per IP (a coarse floor) and per Authorization header (per client), then the AWS common rule set with its body rules counting only', () => {
    const rules = ofType(built.edgeResources, 'AWS::WAFv2::WebACL')[0]!.Properties.Rules as WafRule[];
    expect(rules.map((r) => r.Name)).toEqual(['rate-per-ip', 'rate-per-authorization', 'aws-common-rule-set']);
    expect(rules.map((r) => r.Priority)).toEqual([0, 1, 2]);
    expect(rules[0]!.Statement.RateBasedStatement).toEqual({
      AggregateKeyType: 'IP',
      Limit: DEFAULT_EDGE_RATE_LIMITS.perIp,
      EvaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
    });
    expect(rules[1]!.Statement.RateBasedStatement).toEqual({
      AggregateKeyType: 'CUSTOM_KEYS',
      CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
      Limit: DEFAULT_EDGE_RATE_LIMITS.perAuthorization,
      EvaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
    });
    for (const rule of rules.slice(0, 2)) expect(rule.Action!.Block.CustomResponse.ResponseCode).toBe(429);
    const managed = rules[2]!.Statement.ManagedRuleGroupStatement;
    expect(managed).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' });
    expect(managed.RuleActionOverrides).toEqual(
      COUNT_ONLY_COMMON_RULES.map((name) => ({ Name: name, ActionToUse: { Count: {} } })),
    );
    expect(rules[2]!.OverrideAction).toEqual({ None: {} });

    const tuned = build({ ...EDGE_ON, 'koerier:edgeRateLimits': { perIp: 500, perAuthorization: 200 } });
    const tunedRules = ofType(tuned.edgeResources, 'AWS::WAFv2::WebACL')[0]!.Properties.Rules as WafRule[];
    expect(tunedRules.map((r) => r.Statement.RateBasedStatement?.Limit)).toEqual([500, 200, undefined]);
  });

  it('review #20: CloudFront forwards to the HTTP API over TLS 1.2 with the secret origin header, caches nothing, and carries the web ACL', () => {
    const [distribution, ...others] = ofType(built.resources, 'AWS::CloudFront::Distribution');
    expect(others).toEqual([]);
    const config = distribution!.Properties.DistributionConfig;
    const secretId = logicalId(built.stack, built.stack.edge!.originSecret);
    const [origin] = config.Origins;
    expect(referencedIds(origin.DomainName)).toContain(logicalId(built.stack, built.stack.httpApi.api));
    expect(origin.CustomOriginConfig).toMatchObject({
      OriginProtocolPolicy: 'https-only',
      OriginSSLProtocols: ['TLSv1.2'],
    });
    expect(origin.OriginCustomHeaders).toHaveLength(1);
    expect(origin.OriginCustomHeaders[0].HeaderName).toBe(ORIGIN_VERIFY_HEADER);
    expect(referencedIds(origin.OriginCustomHeaders[0].HeaderValue)).toEqual([secretId]);
    expect(JSON.stringify(origin.OriginCustomHeaders[0].HeaderValue)).toContain('{{resolve:secretsmanager:');
    expect(config.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: 'https-only',
      // Managed policies CachingDisabled and AllViewerExceptHostHeader.
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
      OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
    });
    expect(config.DefaultCacheBehavior.AllowedMethods).toEqual(
      expect.arrayContaining(['POST', 'PATCH', 'DELETE', 'OPTIONS']),
    );
    expect(config.WebACLId).toEqual({
      'Fn::GetStackOutput': expect.objectContaining({
        StackName: built.stack.edgeStack!.stackName,
        Region: 'us-east-1',
      }),
    });
    expect(referencedIds(config.Logging.Bucket)).toEqual([logicalId(built.stack, built.stack.edge!.logs)]);
  });

  it('review #20: every function gets the origin secret to check, and links and the API URL point at CloudFront', () => {
    const secretId = logicalId(built.stack, built.stack.edge!.originSecret);
    const distributionId = logicalId(built.stack, built.stack.edge!.distribution);
    const functionsFound = ofType(built.resources, 'AWS::Lambda::Function');
    expect(functionsFound.length).toBe(built.stack.functions.size);
    for (const fn of functionsFound) {
      const variables = fn.Properties.Environment.Variables;
      expect(referencedIds(variables[settingEnv.originVerifySecret])).toEqual([secretId]);
      expect(referencedIds(variables[settingEnv.publicBaseUrl])).toEqual([distributionId]);
    }
    expect(referencedIds(Template.fromStack(built.stack).toJSON().Outputs.ApiUrl.Value)).toEqual([distributionId]);
  });

  it('review #20: an existing web ACL named in koerier:edgeWebAclArn is used as it is, without a us-east-1 stack or a region', () => {
    const arn = 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/org-edge/0a1b2c3d-1111-2222-3333-444455556666';
    const named = build({ ...EDGE_ON, 'koerier:edgeWebAclArn': arn }, null);
    expect(named.stack.edgeStack).toBeUndefined();
    expect(ofType(named.resources, 'AWS::CloudFront::Distribution')[0]!.Properties.DistributionConfig.WebACLId).toBe(
      arn,
    );
  });

  it('review #20: creating the web ACL without a known account and region stops the synth with what to set', () => {
    expect(() => build(EDGE_ON, null)).toThrow(/needs this stack's account and region .*koerier:edgeWebAclArn/);
  });
});

describe('review #20: cdk-nag AwsSolutions with edge protection on and off', () => {
  it.each([
    ['off', {}],
    ['on, creating the web ACL', EDGE_ON],
    [
      'on, with an existing web ACL',
      {
        ...EDGE_ON,
        'koerier:edgeWebAclArn':
          'arn:aws:wafv2:us-east-1:123456789012:global/webacl/org-edge/0a1b2c3d-1111-2222-3333-444455556666',
      },
    ],
  ] as const)(
    'CARD-2, review #20: edge protection %s: no unacknowledged finding in any stack, and every acknowledgement has a reason and silences a real finding',
    (_label, context) => {
      const { app } = build(context);
      expect(unacknowledgedFindings(app)).toEqual([]);
      expect(unjustifiedAcknowledgements(app)).toEqual([]);
    },
  );

  it('CARD-2, review #20: with edge protection on, exactly the reviewed edge rules are acknowledged, each on the edge construct it concerns', () => {
    const off = new Set(acknowledgementsIn(build({}).app).map((a) => `${a.id} ${a.path}`));
    const added = acknowledgementsIn(build(EDGE_ON).app)
      .map((a) => `${a.id} ${a.path}`)
      .filter((entry) => !off.has(entry));
    expect(added.sort()).toEqual(
      [
        'AwsSolutions-CFR1 Koerier/Edge/Distribution',
        'AwsSolutions-CFR4 Koerier/Edge/Distribution',
        'AwsSolutions-S1 Koerier/Edge/AccessLogs',
        'AwsSolutions-SMG4 Koerier/Edge/OriginSecret',
      ].sort(),
    );
  });

  // Both syntheses as `cdk synth` runs them are here, in one process: CloudFormation's template
  // validator (a 9 MB WebAssembly module) takes seconds to load, and loads once.
  it('CARD-2: synthesis as `cdk synth` does it (checks registered, CloudFormation template validation on) succeeds and records the acknowledgements', () => {
    const app = newApp({}, { builtinValidation: true });
    const stack = buildKoerier(app);
    addComplianceChecks(app);
    // Under vitest the app runs in-memory, where any failing validation plugin makes synth throw.
    const assembly = app.synth();
    // The acknowledgements travel in the template as the audit trail.
    const template = assembly.getStackByName(stack.stackName).template as {
      Resources: Record<string, { Metadata?: { cdk_nag?: { rules_to_suppress: { id: string; reason: string }[] } } }>;
    };
    const audited = Object.values(template.Resources).flatMap((r) => r.Metadata?.cdk_nag?.rules_to_suppress ?? []);
    expect(audited.map((rule) => rule.id)).toEqual(
      expect.arrayContaining(['AwsSolutions-APIG4', 'AwsSolutions-IAM5[Resource::*]']),
    );
  });

  it('CARD-2, review #20: the synth as `cdk synth` runs it (checks registered, template validation on) succeeds with edge protection on', () => {
    const app = newApp(EDGE_ON, { builtinValidation: true });
    new KoerierStack(app, 'Koerier', { config: readStackConfig(app), env: ENV });
    addComplianceChecks(app);
    const assembly = app.synth();
    expect(assembly.stacks.map((s) => `${s.stackName} ${s.environment.region}`).sort()).toEqual([
      'Koerier eu-west-1',
      'KoerierEdge us-east-1',
    ]);
    // Two stacks through CloudFormation's template validation: slow on a busy two-core machine.
  }, 120_000);
});

describe('review #20: synthKoerier (the default test stack) is unchanged in shape', () => {
  it('review #20: an env-agnostic stack with edge protection off still synthesises, with the ingest reserved', () => {
    const { stack, resources } = synthKoerier();
    expect(
      resources[logicalId(stack, stack.functions.get('ingest')!.function)]!.Properties.ReservedConcurrentExecutions,
    ).toBe(DEFAULT_INGEST_RESERVED_CONCURRENCY);
  });
});
