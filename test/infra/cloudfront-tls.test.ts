/**
 * EDU-4 (issue 36, item 7): the Edukoppeling profile asks for TLS per the UBV TLS guideline, TLS 1.2
 * or higher with the NCSC's settings, everywhere Koerier terminates TLS. CloudFront's cloudfront.net
 * name takes TLS 1.0 (its default certificate's policy is fixed by AWS), so every CloudFront
 * distribution gets a name of its own, an ACM certificate in us-east-1 and TLSv1.2_2021, or synth
 * stops, unless the operator accepts the cloudfront.net limit in writing
 * (koerier:allowCloudFrontDefaultCertificate). API Gateway domain names use TLS_1_2.
 */
import { describe, expect, it } from 'vitest';
import { parseStackConfig, StackConfigError } from '../../lib/stack-config.js';
import { API_GATEWAY_TLS_POLICY, CLOUDFRONT_MINIMUM_PROTOCOL, parseTlsConfig } from '../../lib/tls-config.js';
import { acknowledgementsIn, unacknowledgedFindings, unjustifiedAcknowledgements } from './cdk-nag-review.js';
import {
  ACCEPT_CLOUDFRONT_DEFAULT_CERTIFICATE as ACCEPT,
  CONSOLE_NAME,
  EDGE_NAME,
  newApp,
  synthContext,
  synthKoerier,
  TEST_CERTIFICATE_ARN,
  type CfnResourceJson,
} from './synth.js';
import { everyOption, synthInRegion } from './synth-in-region.js';

const EDGE = { 'koerier:edgeProtection': 'cloudfront-waf' } as const;
const ENV = { account: '123456789012', region: 'eu-west-1' } as const;

/** Each configuration with CloudFront, named: the API edge, the console at the organisation's issuer, the console's own pool. */
const NAMED = [
  [
    'the API edge and the organisation console',
    { ...EDGE, ...EDGE_NAME, 'koerier:consoleClientId': 'koerier-console', ...CONSOLE_NAME },
  ],
  ['the console with its user pool', { 'koerier:consoleUserPool': 'gemeente-voorbeeld-koerier', ...CONSOLE_NAME }],
] as const;

function resourcesOf(context: Record<string, unknown>): CfnResourceJson[] {
  // With the edge on, the web ACL's us-east-1 stack needs the account and region.
  return Object.values(
    'koerier:edgeProtection' in context
      ? synthInRegion(ENV.region, context).template.Resources
      : synthKoerier({ context }).resources,
  );
}

const distributionsOf = (resources: CfnResourceJson[]) =>
  resources.filter((r) => r.Type === 'AWS::CloudFront::Distribution');
const apiGatewayDomainsOf = (resources: CfnResourceJson[]) =>
  resources.filter((r) => r.Type === 'AWS::ApiGatewayV2::DomainName' || r.Type === 'AWS::ApiGateway::DomainName');

function refusalOf(context: Record<string, unknown>): string {
  try {
    parseStackConfig({ ...synthContext, ...context });
  } catch (error) {
    expect(error).toBeInstanceOf(StackConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('EDU-4: TLS 1.2 or higher wherever Koerier terminates TLS (issue 36, item 7)', () => {
  it.each(NAMED)(
    'EDU-4: with %s, every CloudFront distribution has its own name, an ACM certificate and MinimumProtocolVersion TLSv1.2_2021',
    (_label, context) => {
      const distributions = distributionsOf(resourcesOf(context));
      expect(distributions.length).toBe('koerier:edgeProtection' in context ? 2 : 1);
      for (const distribution of distributions) {
        const config = distribution.Properties['DistributionConfig'];
        expect(config['ViewerCertificate']).toEqual({
          AcmCertificateArn: TEST_CERTIFICATE_ARN,
          MinimumProtocolVersion: CLOUDFRONT_MINIMUM_PROTOCOL,
          SslSupportMethod: 'sni-only',
        });
        expect(CLOUDFRONT_MINIMUM_PROTOCOL).toBe('TLSv1.2_2021');
        expect(config['Aliases']).toHaveLength(1);
      }
    },
  );

  it('EDU-4: named, the API is published at its own name and the console calls it there; CORS and the sign-in redirects know the console by its name only', () => {
    const { stack, template } = synthInRegion(ENV.region, NAMED[0][1]);
    expect(JSON.stringify(template.Outputs!['ApiUrl'].Value)).toBe(
      JSON.stringify('https://koerier.gemeente.example/v1'),
    );
    expect(stack.console!.config['apiUrl']).toBe('https://koerier.gemeente.example/v1');
    expect(template.Outputs!['ConsoleUrl'].Value).toBe('https://console.koerier.gemeente.example/console/');
    expect(Object.keys(template.Outputs!)).toEqual(expect.arrayContaining(['EdgeDnsTarget', 'ConsoleDnsTarget']));
    const api = Object.values(template.Resources).find((r) => r.Type === 'AWS::ApiGatewayV2::Api')!;
    expect(api.Properties['CorsConfiguration']['AllowOrigins']).toEqual(['https://console.koerier.gemeente.example']);

    const pool = synthKoerier({ context: NAMED[1][1] }).template.toJSON().Resources as Record<string, CfnResourceJson>;
    const client = Object.values(pool).find((r) => r.Type === 'AWS::Cognito::UserPoolClient')!;
    expect(client.Properties['CallbackURLs']).toEqual([
      'https://console.koerier.gemeente.example/console/',
      'https://console.koerier.gemeente.example/',
    ]);
  });

  it('EDU-4: synth refuses the API edge or a console on the cloudfront.net name, naming the settings to give', () => {
    for (const [context, domainKey, certificateKey] of [
      [EDGE, 'koerier:edgeDomain', 'koerier:edgeCertificateArn'],
      [{ 'koerier:consoleClientId': 'koerier-console' }, 'koerier:consoleDomain', 'koerier:consoleCertificateArn'],
      [
        { 'koerier:consoleUserPool': 'gemeente-voorbeeld-koerier' },
        'koerier:consoleDomain',
        'koerier:consoleCertificateArn',
      ],
      [
        { ...EDGE, ...EDGE_NAME, 'koerier:consoleClientId': 'koerier-console' },
        'koerier:consoleDomain',
        'koerier:consoleCertificateArn',
      ],
    ] as const) {
      const message = refusalOf(context);
      expect(message, JSON.stringify(context)).toContain('TLS 1.0');
      expect(message).toContain(
        `give ${domainKey} (its name) and ${certificateKey} (an ACM certificate for that name in us-east-1)`,
      );
      expect(message).toContain('koerier:allowCloudFrontDefaultCertificate true');
    }
    // The stack itself never gets built from such a configuration.
    expect(() => synthKoerier({ context: { 'koerier:consoleClientId': 'koerier-console' } })).toThrow(StackConfigError);
  });

  it('EDU-4: accepted in writing, the cloudfront.net name keeps the default certificate, and cdk-nag’s CFR4 is acknowledged with that acceptance as its reason', () => {
    const context = { ...EDGE, 'koerier:consoleClientId': 'koerier-console', ...ACCEPT };
    const { app, template } = synthInRegion(ENV.region, context);
    const distributions = distributionsOf(Object.values(template.Resources));
    expect(distributions).toHaveLength(2);
    for (const distribution of distributions) {
      // Every distribution: TLSv1.2_2021, or the operator's acceptance, which this context holds.
      const certificate = distribution.Properties['DistributionConfig']['ViewerCertificate'];
      expect(
        certificate?.['MinimumProtocolVersion'] === CLOUDFRONT_MINIMUM_PROTOCOL ||
          context['koerier:allowCloudFrontDefaultCertificate'],
      ).toBe(true);
      // No ViewerCertificate: CloudFront's default certificate on the cloudfront.net name.
      expect(certificate).toBeUndefined();
    }
    const acknowledged = acknowledgementsIn(app).filter((ack) => ack.id === 'AwsSolutions-CFR4');
    expect(acknowledged.map((ack) => ack.path).sort()).toEqual([
      'Koerier/Console/Distribution',
      'Koerier/Edge/Distribution',
    ]);
    for (const ack of acknowledged)
      expect(ack.reason).toContain('The operator set koerier:allowCloudFrontDefaultCertificate');
    expect(unacknowledgedFindings(app)).toEqual([]);
    expect(unjustifiedAcknowledgements(app)).toEqual([]);
  });

  it.each(NAMED)(
    'CARD-2, EDU-4: with %s named, cdk-nag finds no TLS floor to acknowledge, and no acknowledgement is idle',
    (_label, context) => {
      const app =
        'koerier:edgeProtection' in context
          ? synthInRegion(ENV.region, context).app
          : synthKoerier({ app: newApp(context) }).app;
      expect(unacknowledgedFindings(app)).toEqual([]);
      expect(unjustifiedAcknowledgements(app)).toEqual([]);
    },
  );

  it('EDU-4: every API Gateway domain name uses the TLS_1_2 security policy, in every configuration', () => {
    expect(API_GATEWAY_TLS_POLICY).toBe('TLS_1_2');
    for (const context of [{}, ...NAMED.map(([, named]) => named), everyOption('eu-west-1')]) {
      const resources = resourcesOf(context);
      for (const domain of apiGatewayDomainsOf(resources)) {
        const policy =
          domain.Properties['SecurityPolicy'] ?? domain.Properties['DomainNameConfigurations']?.[0]?.['SecurityPolicy'];
        expect(policy, JSON.stringify(domain)).toBe(API_GATEWAY_TLS_POLICY);
      }
      // The API itself is an HTTP API, whose execute-api endpoint AWS serves with TLS 1.2 only.
      expect(
        resources.filter((r) => r.Type === 'AWS::ApiGatewayV2::Api').map((r) => r.Properties['ProtocolType']),
      ).toEqual(['HTTP']);
      expect(resources.filter((r) => r.Type === 'AWS::ApiGateway::RestApi')).toEqual([]);
    }
  });

  it('EDU-4: the names come in pairs, as a lower-case host name and a us-east-1 ACM certificate, only where their distribution is, and an idle acceptance is refused', () => {
    const issuesOf = (context: Record<string, unknown>, uses = { edge: true, console: true }) => {
      const issues: string[] = [];
      parseTlsConfig(context, issues, uses);
      return issues;
    };
    expect(issuesOf({ ...EDGE_NAME, ...CONSOLE_NAME })).toEqual([]);
    expect(issuesOf({ ...EDGE_NAME, 'koerier:consoleDomain': 'console.koerier.gemeente.example' })).toEqual([
      expect.stringMatching(/^koerier:consoleCertificateArn must be the ARN of an ACM certificate in us-east-1/),
    ]);
    expect(
      issuesOf({
        ...EDGE_NAME,
        ...CONSOLE_NAME,
        'koerier:edgeCertificateArn': TEST_CERTIFICATE_ARN.replace('us-east-1', 'eu-west-1'),
      }),
    ).toEqual([
      expect.stringMatching(/^koerier:edgeCertificateArn must be the ARN of an ACM certificate in us-east-1/),
    ]);
    for (const domain of [
      'Koerier.Example.nl',
      'localhost',
      '*.gemeente.example',
      'https://koerier.gemeente.example',
      'koerier.gemeente.example.',
    ]) {
      expect(issuesOf({ ...EDGE_NAME, ...CONSOLE_NAME, 'koerier:edgeDomain': domain }), domain).toEqual([
        expect.stringMatching(/^koerier:edgeDomain must be a host name/),
      ]);
    }
    expect(issuesOf({ ...EDGE_NAME }, { edge: false, console: false })).toEqual([
      'koerier:edgeDomain applies only with koerier:edgeProtection "cloudfront-waf"',
      'koerier:edgeCertificateArn applies only with koerier:edgeProtection "cloudfront-waf"',
    ]);
    expect(issuesOf({ ...ACCEPT, ...EDGE_NAME, ...CONSOLE_NAME })).toEqual([
      expect.stringMatching(/no CloudFront distribution of this deployment is left without a name/),
    ]);
    expect(issuesOf({ ...ACCEPT }, { edge: false, console: false })).toHaveLength(1);
    expect(issuesOf({ 'koerier:allowCloudFrontDefaultCertificate': 'yes' }, { edge: false, console: false })).toEqual([
      'koerier:allowCloudFrontDefaultCertificate must be true or false, got "yes"',
    ]);
    // `-c key=true` arrives as text.
    expect(
      parseTlsConfig({ 'koerier:allowCloudFrontDefaultCertificate': 'true' }, [], { edge: true, console: false })
        .allowCloudFrontDefaultCertificate,
    ).toBe(true);
  });
});
