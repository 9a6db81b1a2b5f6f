/**
 * Synthesises Koerier's stack the way `cdk synth` does (cdk.json's context, feature flags
 * included, plus the required settings cdk.json deliberately leaves out), but without esbuild
 * bundling, so infra tests take seconds.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { KoerierStack, REPO_ROOT, type ResourceDescription } from '../../lib/koerier-stack.js';
import { readStackConfig } from '../../lib/stack-config.js';

export const cdkJsonContext: Record<string, unknown> = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'cdk.json'), 'utf8'),
).context;

/** What an operator passes with `-c` (cdk.json has no working values, so nothing can be forgotten). */
export const requiredTestContext: Record<string, unknown> = {
  'koerier:issuer': 'https://login.example.org/realms/koerier',
  'koerier:audience': 'koerier',
  'koerier:jwksUrl': 'https://login.example.org/realms/koerier/protocol/openid-connect/certs',
  'koerier:tokenUrl': 'https://login.example.org/realms/koerier/protocol/openid-connect/token',
  'koerier:accessTokenType': 'at+jwt',
  'koerier:accessTokenMaxLifetimeMinutes': 120,
  'koerier:clientIdClaim': 'client_id',
  'koerier:allowedOrigins': ['koerier.example.org'],
  'koerier:webhookOrigin': 'koerier.example.org',
  'koerier:publishers': { 'partner-leerlingadministratie': ['urn:nld:oin:00000001823288444000:'] },
  'koerier:entitlements': { 'partner-ontvanger': [{ typePrefix: 'nl.edu.leerling.' }] },
};

/**
 * EDU-4 (lib/tls-config.ts): a CloudFront distribution needs a name of its own with an ACM
 * certificate in us-east-1, or the operator's acceptance of the cloudfront.net name's TLS 1.0.
 */
export const ACCEPT_CLOUDFRONT_DEFAULT_CERTIFICATE = { 'koerier:allowCloudFrontDefaultCertificate': true } as const;
export const TEST_CERTIFICATE_ARN =
  'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666';
export const EDGE_NAME = {
  'koerier:edgeDomain': 'koerier.gemeente.example',
  'koerier:edgeCertificateArn': TEST_CERTIFICATE_ARN,
} as const;
export const CONSOLE_NAME = {
  'koerier:consoleDomain': 'console.koerier.gemeente.example',
  'koerier:consoleCertificateArn': TEST_CERTIFICATE_ARN,
} as const;

/** cdk.json's context with the required settings: what the infra tests synthesise with. */
export const synthContext: Record<string, unknown> = { ...cdkJsonContext, ...requiredTestContext };

/**
 * CDK's built-in CloudFormation template validation (on in `cdk synth`) adds seconds to every
 * synthesis, so only the tests that mirror `cdk synth` turn it on.
 */
export function newApp(context: Record<string, unknown> = {}, options: { builtinValidation?: boolean } = {}): App {
  return new App({
    context: { ...synthContext, ...context, 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: options.builtinValidation ?? false,
  });
}

export interface Synthesised {
  readonly app: App;
  readonly stack: KoerierStack;
  readonly template: Template;
  readonly resources: Record<string, CfnResourceJson>;
}

export interface CfnResourceJson {
  readonly Type: string;
  // Template JSON is untyped CloudFormation; the tests navigate it freely and assert on what they find.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly Properties: Record<string, any>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
}

/** The stack in `app`, not yet synthesised (so validation plugins can still be added). */
export function buildKoerier(app: App, resources?: ResourceDescription): KoerierStack {
  const config = readStackConfig(app);
  return new KoerierStack(app, config.stackName, { config, ...(resources ? { resources } : {}) });
}

export function synthKoerier(
  options: { context?: Record<string, unknown>; resources?: ResourceDescription; app?: App } = {},
): Synthesised {
  const app = options.app ?? newApp(options.context);
  const stack = buildKoerier(app, options.resources);
  const template = Template.fromStack(stack);
  return { app, stack, template, resources: template.toJSON().Resources };
}

/** The logical ID of a construct's CloudFormation resource. */
export function logicalId(stack: Stack, construct: IConstruct): string {
  return stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

/** Logical IDs a CloudFormation value refers to (Ref, Fn::GetAtt), however deeply nested. */
export function referencedIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(referencedIds);
  if (typeof value !== 'object' || value === null) return [];
  const record = value as Record<string, unknown>;
  if (typeof record.Ref === 'string') return [record.Ref];
  const getAtt = record['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return [getAtt[0]];
  return Object.values(record).flatMap(referencedIds);
}
