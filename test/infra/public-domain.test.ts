/**
 * Issue 31, item 1: one public base URL. With `koerier:publicDomain` (and its certificate) the
 * stack creates an API Gateway custom domain name mapped to the HTTP API, and every link setting
 * the stack writes (the functions' KOERIER_PUBLIC_BASE_URL, from which `dataref`, validation
 * callbacks, operational events' `source` and the API description's `servers` are made; the
 * console's API URL; the Cognito client's redirect URIs; the URL outputs) names the public host,
 * or the console's own name, and nothing names the execute-api endpoint. Without it, the
 * execute-api URL everywhere alike.
 */
import { describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { parseStackConfig, StackConfigError } from '../../lib/stack-config.js';
import { unacknowledgedFindings, unjustifiedAcknowledgements } from './cdk-nag-review.js';
import { CONSOLE_NAME, logicalId, synthContext, synthKoerier, type CfnResourceJson } from './synth.js';
import { synthInRegion, TEST_ACCOUNT } from './synth-in-region.js';

const PUBLIC_HOST = 'koerier.gemeente.example';
const REGIONAL_CERTIFICATE = `arn:aws:acm:eu-west-1:${TEST_ACCOUNT}:certificate/0a1b2c3d-1111-2222-3333-444455556666`;
const PUBLIC_NAME = { 'koerier:publicDomain': PUBLIC_HOST, 'koerier:publicCertificateArn': REGIONAL_CERTIFICATE };
/** Every link-bearing option at once: the console with its own user pool and name, the stack's signing key. */
const WITH_CONSOLE = { ...PUBLIC_NAME, 'koerier:consoleUserPool': 'gemeente-voorbeeld-koerier', ...CONSOLE_NAME };

const ofType = (resources: Record<string, CfnResourceJson>, type: string) =>
  Object.values(resources).filter((resource) => resource.Type === type);

/** The literal strings of a CloudFormation value, with the `Fn::Join`s it holds joined (a reference stays `${Ref}`). */
function rendered(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(rendered).join(' ');
  if (typeof value !== 'object' || value === null) return String(value);
  const record = value as Record<string, unknown>;
  const join = record['Fn::Join'] as [string, unknown[]] | undefined;
  if (join) return join[1].map(rendered).join(join[0]);
  if ('Ref' in record) return `\${${String(record['Ref'])}}`;
  if ('Fn::GetAtt' in record) return `\${${(record['Fn::GetAtt'] as string[]).join('.')}}`;
  return Object.values(record).map(rendered).join(' ');
}

/** Every `https://host` a value names, as written into the template. */
const hostsIn = (text: string): string[] => [...text.matchAll(/https:\/\/([^/\s"'$]+)/g)].map((m) => m[1]!);

describe('issue 31 item 1: koerier:publicDomain, the API at a name of its own', () => {
  it('LIVE-1, issue 31 item 1: the stack creates a regional custom domain name with the certificate and TLS_1_2, maps it to the HTTP API $default stage, and outputs the DNS target', () => {
    const { stack, template } = synthInRegion('eu-west-1', PUBLIC_NAME);
    const domains = ofType(template.Resources, 'AWS::ApiGatewayV2::DomainName');
    expect(domains).toHaveLength(1);
    expect(domains[0]!.Properties).toEqual({
      DomainName: PUBLIC_HOST,
      DomainNameConfigurations: [
        { CertificateArn: REGIONAL_CERTIFICATE, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' },
      ],
    });
    const mappings = ofType(template.Resources, 'AWS::ApiGatewayV2::ApiMapping');
    expect(mappings).toHaveLength(1);
    const domainId = logicalId(stack, stack.publicDomain!.domainName);
    expect(mappings[0]!.Properties).toEqual({
      ApiId: { Ref: logicalId(stack, stack.httpApi.api) },
      DomainName: { Ref: domainId },
      Stage: '$default',
    });
    expect(template.Outputs!['PublicDomainDnsTarget'].Value).toEqual({
      'Fn::GetAtt': [domainId, 'RegionalDomainName'],
    });
    expect(template.Outputs!['PublicDomainHostedZoneId'].Value).toEqual({
      'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'],
    });
    expect(template.Outputs!['ApiUrl'].Value).toBe(`https://${PUBLIC_HOST}/v1`);
  });

  it('LIVE-1, issue 31 item 1: with koerier:publicDomain no link setting names another host: every function, the outputs, the console and its sign-in', () => {
    const { stack, template } = synthInRegion('eu-west-1', WITH_CONSOLE);
    const apiEndpoint = `\${${logicalId(stack, stack.httpApi.api)}.ApiEndpoint}`;
    const links: [string, string][] = [];
    const functions = ofType(template.Resources, 'AWS::Lambda::Function').filter(
      (fn) => fn.Properties.Environment?.Variables?.[settingEnv.stackName] !== undefined,
    );
    expect(functions.length).toBeGreaterThan(5);
    for (const fn of functions) {
      const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
      // The base of dataref, callbacks, `servers`, contract links and, unset KOERIER_OPERATIONS_SOURCE, operational events' source.
      expect(variables[settingEnv.publicBaseUrl]).toBe(`https://${PUBLIC_HOST}/v1`);
      expect(variables[settingEnv.operationsSource]).toBeUndefined();
      for (const [name, value] of Object.entries(variables)) links.push([`function ${name}`, rendered(value)]);
    }
    for (const [name, output] of Object.entries(template.Outputs ?? {}))
      links.push([`output ${name}`, rendered(output.Value)]);
    const [client] = ofType(template.Resources, 'AWS::Cognito::UserPoolClient');
    expect(client!.Properties.CallbackURLs).toEqual([
      `https://${CONSOLE_NAME['koerier:consoleDomain']}/console/`,
      `https://${CONSOLE_NAME['koerier:consoleDomain']}/`,
    ]);
    links.push(['console redirect URIs', rendered([client!.Properties.CallbackURLs, client!.Properties.LogoutURLs])]);
    // config.json is an asset of its own (its literal values are not in the template).
    expect(stack.console!.config.apiUrl).toBe(`https://${PUBLIC_HOST}/v1`);
    links.push(['console config.json', rendered(stack.console!.config)]);

    const allowed = new Set([
      PUBLIC_HOST,
      CONSOLE_NAME['koerier:consoleDomain'],
      // The organisation's issuer, its keys and token endpoint are its own host's.
      new URL(synthContext['koerier:issuer'] as string).host,
    ]);
    const elsewhere = links.flatMap(([where, text]) =>
      hostsIn(text)
        .filter((host) => !allowed.has(host) && !host.includes('amazoncognito.com') && !host.startsWith('cognito-idp.'))
        .map((host) => `${where}: ${host}`),
    );
    expect(elsewhere).toEqual([]);
    // Nothing is built on the execute-api endpoint or CloudFront's own name.
    expect(links.filter(([, text]) => text.includes(apiEndpoint)).map(([where]) => where)).toEqual([]);
    expect(links.filter(([, text]) => /execute-api|cloudfront\.net/.test(text)).map(([where]) => where)).toEqual([]);
  });

  it('LIVE-1, issue 31 item 1, CARD-2: with the custom domain, cdk-nag finds nothing unacknowledged and no acknowledgement is idle', () => {
    const { app } = synthInRegion('eu-west-1', WITH_CONSOLE);
    expect(unacknowledgedFindings(app)).toEqual([]);
    expect(unjustifiedAcknowledgements(app)).toEqual([]);
  });

  it('LIVE-1, issue 31 item 1: without koerier:publicDomain every link names the execute-api URL alike, and no custom domain is made', () => {
    const { stack, resources } = synthKoerier();
    expect(stack.publicDomain).toBeUndefined();
    expect(ofType(resources, 'AWS::ApiGatewayV2::DomainName')).toEqual([]);
    expect(ofType(resources, 'AWS::ApiGatewayV2::ApiMapping')).toEqual([]);
    const apiEndpoint = { 'Fn::GetAtt': [logicalId(stack, stack.httpApi.api), 'ApiEndpoint'] };
    for (const fn of ofType(resources, 'AWS::Lambda::Function').filter(
      (f) => f.Properties.Environment?.Variables?.[settingEnv.stackName] !== undefined,
    ))
      expect(fn.Properties.Environment.Variables[settingEnv.publicBaseUrl]).toEqual({
        'Fn::Join': ['', [apiEndpoint, '/v1']],
      });
  });

  it('LIVE-1, issue 31 item 1: the name must be a host name and the certificate an ACM ARN, in pairs, and not with cloudfront-waf', () => {
    const refusal = (context: Record<string, unknown>): string => {
      try {
        parseStackConfig({ ...synthContext, ...context });
      } catch (error) {
        expect(error).toBeInstanceOf(StackConfigError);
        return (error as Error).message;
      }
      throw new Error(`expected ${JSON.stringify(context)} to be refused`);
    };
    expect(refusal({ ...PUBLIC_NAME, 'koerier:publicDomain': `https://${PUBLIC_HOST}/` })).toContain(
      `koerier:publicDomain must be a host name, not a URL: give ${PUBLIC_HOST}`,
    );
    expect(refusal({ ...PUBLIC_NAME, 'koerier:publicDomain': `${PUBLIC_HOST}:8443` })).toContain(
      'koerier:publicDomain must be a host name without a port',
    );
    expect(refusal({ 'koerier:publicDomain': PUBLIC_HOST })).toContain(
      'koerier:publicCertificateArn is required with koerier:publicDomain',
    );
    expect(refusal({ ...PUBLIC_NAME, 'koerier:publicCertificateArn': 'arn:aws:iam::123456789012:role/x' })).toContain(
      'koerier:publicCertificateArn must be the ARN of an ACM certificate',
    );
    expect(
      refusal({
        ...PUBLIC_NAME,
        'koerier:edgeProtection': 'cloudfront-waf',
        'koerier:allowCloudFrontDefaultCertificate': true,
      }),
    ).toContain('give the name as koerier:edgeDomain');
    expect(parseStackConfig({ ...synthContext, ...PUBLIC_NAME }).publicDomain).toEqual({
      domainName: PUBLIC_HOST,
      certificateArn: REGIONAL_CERTIFICATE,
    });
  });

  it("LIVE-1, issue 31 item 1: a certificate of another region than the stack's stops the synth, as API Gateway regional domains take theirs from their own region", () => {
    expect(() => synthInRegion('eu-central-1', PUBLIC_NAME)).toThrow(
      new StackConfigError(
        'koerier:publicCertificateArn is a certificate in eu-west-1, and the API Gateway regional domain name takes its certificate from eu-central-1: request (or import) it there',
      ),
    );
  });
});
