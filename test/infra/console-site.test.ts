/**
 * The console in AWS (issue 16): served from a private bucket behind CloudFront, its config.json
 * naming the API, the organisation's issuer and the console's public client, the API answering the
 * console origin's CORS preflights, cdk-nag clean. Without koerier:consoleClientId there is none.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/koerier-stack.js';
import { acknowledgementsIn, unacknowledgedFindings, unjustifiedAcknowledgements } from './cdk-nag-review.js';
import { ACCEPT_CLOUDFRONT_DEFAULT_CERTIFICATE as ACCEPT, newApp, synthKoerier } from './synth.js';
import { synthInRegion } from './synth-in-region.js';

describe('console site (koerier:consoleClientId)', () => {
  let app: ReturnType<typeof newApp>;
  let template: Template;
  let config: Readonly<Record<string, string>> | undefined;
  beforeAll(() => {
    app = newApp({ 'koerier:consoleClientId': 'koerier-console', ...ACCEPT });
    const synthesised = synthKoerier({ app });
    template = synthesised.template;
    config = synthesised.stack.console?.config;
  });

  it('issue 16: CloudFront serves the console from a private bucket through origin access control, with a strict Content-Security-Policy', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LoggingConfiguration: { LogFilePrefix: 'files/' },
    });
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: {
        DefaultRootObject: 'console/index.html',
        DefaultCacheBehavior: { ViewerProtocolPolicy: 'redirect-to-https' },
      },
    });
    const policies = Object.values(template.findResources('AWS::CloudFront::ResponseHeadersPolicy'));
    expect(policies).toHaveLength(1);
    const csp = JSON.stringify(policies[0]);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('issue 16: config.json names the issuer and the public client, never a secret; the API allows the console origin only', () => {
    expect(Object.values(template.findResources('Custom::CDKBucketDeployment'))).toHaveLength(1);
    expect(config).toMatchObject({ clientId: 'koerier-console', issuer: 'https://login.example.org/realms/koerier' });
    expect(config?.['scope']?.split(' ')).toContain('subscriptions:manage');
    expect(Object.keys(config ?? {}).sort()).toEqual(['apiUrl', 'clientId', 'issuer', 'scope']);
    const api = Object.values(template.findResources('AWS::ApiGatewayV2::Api'))[0] as {
      Properties: { CorsConfiguration?: { AllowOrigins: unknown[] } };
    };
    const origins = JSON.stringify(api.Properties.CorsConfiguration?.AllowOrigins);
    expect(origins).toMatch(/DomainName/);
    expect(origins).not.toContain('*');
    template.hasOutput('ConsoleUrl', {});
  });

  it('CARD-2, issue 16: cdk-nag reports nothing unacknowledged, and each acknowledgement silences a real finding', () => {
    expect(unacknowledgedFindings(app)).toEqual([]);
    expect(acknowledgementsIn(app).some((ack) => ack.path.includes('/Console/'))).toBe(true);
    expect(unjustifiedAcknowledgements(app)).toEqual([]);
  });

  it('issue 16: without koerier:consoleClientId no console is deployed and the API keeps no CORS configuration', () => {
    const plain = synthKoerier({ app: newApp() }).template;
    expect(Object.keys(plain.findResources('Custom::CDKBucketDeployment'))).toHaveLength(0);
    expect(Object.keys(plain.findOutputs('ConsoleUrl'))).toHaveLength(0);
    const api = Object.values(plain.findResources('AWS::ApiGatewayV2::Api'))[0] as {
      Properties: Record<string, unknown>;
    };
    expect(api.Properties['CorsConfiguration']).toBeUndefined();
  });
});

describe('issue 28: the console synthesised with a concrete region, as every `cdk deploy` does', () => {
  const consoleOptions = [
    ['koerier:consoleClientId', { 'koerier:consoleClientId': 'koerier-console', ...ACCEPT }],
    ['koerier:consoleUserPool', { 'koerier:consoleUserPool': 'gemeente-voorbeeld-koerier', ...ACCEPT }],
  ] as const;
  // One region of each partition the table holds: the finding names the partition too.
  const cases = (['eu-central-1', 'eusc-de-east-1'] as const).flatMap((region) =>
    consoleOptions.map(([option, context]) => [option, region, context] as const),
  );

  it.each(cases)(
    'CARD-2, issue 28: with %s in %s, cdk-nag reports nothing unacknowledged and each acknowledgement silences a real finding',
    (_option, region, context) => {
      const { app } = synthInRegion(region, context);
      expect(unacknowledgedFindings(app)).toEqual([]);
      expect(unjustifiedAcknowledgements(app)).toEqual([]);
    },
  );

  it("CARD-2, issue 28: on the cloudfront.net name the console's distribution claims no TLS floor the default certificate cannot give, so synthesis warns of nothing there; DEPLOYING.md states the limit", () => {
    const { stack, template } = synthInRegion('eu-central-1', {
      'koerier:consoleClientId': 'koerier-console',
      ...ACCEPT,
    });
    const warnings = Annotations.fromStack(stack)
      .findWarning('*', Match.anyValue())
      .filter((warning) => warning.id.includes('/Console/'));
    expect(warnings.map((warning) => `${warning.id}: ${JSON.stringify(warning.entry.data)}`)).toEqual([]);
    const distribution = Object.values(template.Resources).find(
      (resource) => resource.Type === 'AWS::CloudFront::Distribution',
    )!;
    const certificate = distribution.Properties['DistributionConfig']['ViewerCertificate'] as
      Record<string, unknown> | undefined;
    expect(certificate?.['MinimumProtocolVersion']).toBeUndefined();
    const guide = readFileSync(join(REPO_ROOT, 'docs/DEPLOYING.md'), 'utf8');
    expect(guide).toMatch(/### The console on its cloudfront.net name\n[\s\S]*TLS 1\.0[\s\S]*TLS 1\.2/);
  });
});
