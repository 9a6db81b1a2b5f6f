/**
 * Synthesises Koerier's stack as bin/koerier.ts does under `cdk synth` with a profile: account and
 * region from the environment (`CDK_DEFAULT_ACCOUNT`, `CDK_DEFAULT_REGION`), or neither for an
 * environment-agnostic synth. Bundling skipped, as in ./synth.ts.
 */
import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { KoerierStack } from '../../lib/koerier-stack.js';
import { koerierRegions, type KoerierRegionName } from '../../lib/regions.js';
import { readStackConfig } from '../../lib/stack-config.js';
import { newApp, type CfnResourceJson } from './synth.js';

export const TEST_ACCOUNT = '123456789012';

/** A template as CloudFormation reads it; navigated freely by the tests. */
export interface TemplateJson {
  readonly Resources: Record<string, CfnResourceJson>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly Outputs?: Record<string, any>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly Mappings?: Record<string, any>;
}

export interface RegionalSynth {
  readonly app: App;
  readonly stack: KoerierStack;
  readonly template: TemplateJson;
}

/** `region` undefined: no environment at all, as when the app runs outside the CDK CLI. */
export function synthInRegion(region: string | undefined, context: Record<string, unknown> = {}): RegionalSynth {
  const app = newApp(context);
  const config = readStackConfig(app);
  const stack = new KoerierStack(app, config.stackName, {
    config,
    ...(region === undefined ? {} : { env: { account: TEST_ACCOUNT, region } }),
  });
  return { app, stack, template: Template.fromStack(stack).toJSON() as TemplateJson };
}

/** The context that puts every ARN-bearing option in the stack the region's row allows: signing keys, mTLS, console pool, edge, fixed egress. */
export function everyOption(region: KoerierRegionName): Record<string, unknown> {
  const row = koerierRegions[region] as (typeof koerierRegions)[KoerierRegionName];
  const partition = row.partition;
  return {
    'koerier:signingKeys': [
      `arn:${partition}:kms:${region}:${TEST_ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`,
      'stack',
    ],
    'koerier:consoleUserPool': 'gemeente-voorbeeld-koerier',
    'koerier:fixedEgressAddresses': 1,
    ...('paramsAndSecretsArm64' in row
      ? {
          'koerier:clientCertificateSecretArn': `arn:${partition}:secretsmanager:${region}:${TEST_ACCOUNT}:secret:koerier/mtls-AbCdEf`,
        }
      : {}),
    // EDU-4: where CloudFront's certificates are known to live (us-east-1), both distributions get a
    // name and a certificate; elsewhere the console stays on cloudfront.net, accepted in writing.
    ...('cloudFrontWebAclRegion' in row
      ? {
          'koerier:edgeProtection': 'cloudfront-waf',
          'koerier:edgeDomain': 'koerier.gemeente.example',
          'koerier:edgeCertificateArn': `arn:${partition}:acm:us-east-1:${TEST_ACCOUNT}:certificate/0a1b2c3d-1111-2222-3333-444455556666`,
          'koerier:consoleDomain': 'console.koerier.gemeente.example',
          'koerier:consoleCertificateArn': `arn:${partition}:acm:us-east-1:${TEST_ACCOUNT}:certificate/0a1b2c3d-1111-2222-3333-444455556666`,
        }
      : { 'koerier:allowCloudFrontDefaultCertificate': true }),
  };
}
