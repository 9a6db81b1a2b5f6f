/**
 * The API's public name (issue 31, item 1; lib/public-domain-config.ts): an API Gateway regional
 * custom domain name with the operator's ACM certificate and the TLS_1_2 security policy, mapped
 * to the HTTP API's `$default` stage, so `https://<name>/v1/…` reaches the same routes as the
 * execute-api URL. Output `PublicDomainDnsTarget` is what the DNS record points at (a CNAME, or a
 * Route 53 alias with `PublicDomainHostedZoneId`).
 */
import { CfnOutput, Stack, Token } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import { Construct } from 'constructs';
import type { PublicDomainConfig } from '../public-domain-config.js';
import { publicDomainContextKey } from '../public-domain-config.js';
import { acmCertificateArnProblem } from '../setting-checks.js';
import { StackConfigError } from '../stack-config.js';

export interface PublicDomainProps {
  readonly name: PublicDomainConfig;
  readonly api: apigw.HttpApi;
  readonly stage: apigw.IStage;
}

export class PublicDomain extends Construct {
  readonly domainName: apigw.DomainName;
  /** The host name itself, e.g. `koerier.gemeente.nl`. */
  readonly name: string;
  /** `https://<name>`, the origin every link Koerier hands out starts with. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: PublicDomainProps) {
    super(scope, id);
    const region = Stack.of(this).region;
    // A regional domain name takes its certificate from its own region; known at synth, it is checked here.
    // (Environment-agnostic, API Gateway refuses another region's certificate when the domain is created.)
    if (!Token.isUnresolved(region)) {
      const problem = acmCertificateArnProblem(props.name.certificateArn, {
        name: region,
        where: 'the API Gateway regional domain name',
      });
      if (problem) throw new StackConfigError(`${publicDomainContextKey.publicCertificateArn} ${problem}`);
    }
    this.domainName = new apigw.DomainName(this, 'DomainName', {
      domainName: props.name.domainName,
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.name.certificateArn),
      endpointType: apigw.EndpointType.REGIONAL,
      // EDU-4: TLS 1.2 or higher (lib/tls-config.ts, API_GATEWAY_TLS_POLICY).
      securityPolicy: apigw.SecurityPolicy.TLS_1_2,
    });
    new apigw.ApiMapping(this, 'Mapping', { api: props.api, domainName: this.domainName, stage: props.stage });
    this.name = props.name.domainName;
    this.url = `https://${props.name.domainName}`;
    new CfnOutput(Stack.of(this), 'PublicDomainDnsTarget', {
      description: `Point ${props.name.domainName} (koerier:publicDomain) here: a CNAME, or a Route 53 alias in PublicDomainHostedZoneId`,
      value: this.domainName.regionalDomainName,
    });
    new CfnOutput(Stack.of(this), 'PublicDomainHostedZoneId', {
      description: 'The hosted zone of PublicDomainDnsTarget, for a Route 53 alias record',
      value: this.domainName.regionalHostedZoneId,
    });
  }
}
