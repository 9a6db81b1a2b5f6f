/**
 * The optional edge in front of the HTTP API (CDK context `koerier:edgeProtection:
 * "cloudfront-waf"`, docs/OPERATIONS.md "Protecting the edge"):
 *
 *   caller ── CloudFront ── AWS WAF web ACL (rate per IP, rate per Authorization, AWS common rules)
 *                └── HTTP API (execute-api), every request with the secret origin header
 *
 * AWS WAF cannot be attached to an API Gateway HTTP API (only to REST APIs, ALBs, CloudFront, …),
 * so it sits on a CloudFront distribution. A web ACL for CloudFront has scope CLOUDFRONT and must
 * be created in us-east-1; `KoerierEdgeStack` holds it there, and the Koerier stack reads its ARN
 * through CDK's cross-region references (an SSM parameter in us-east-1 that a small custom
 * resource reads at deploy time). Or the operator names an existing web ACL (`koerier:edgeWebAclArn`,
 * e.g. one Firewall Manager manages), and no us-east-1 stack is made.
 *
 * The execute-api address stays reachable from the internet (an HTTP API has no resource policy,
 * and disabling it would need a custom domain, which is just as public), so CloudFront adds a
 * secret header to every request it forwards and the functions refuse any request without it
 * before doing anything else (functions/app/origin-guard.ts).
 */
import { Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { ORIGIN_VERIFY_HEADER } from '../../functions/app/origin-guard.js';
import { problemType } from '../../functions/core/http/problems.js';
import { cloudFrontViewerTls, type CloudFrontName } from './cloudfront-tls.js';

/** WAF's evaluation window for the rate rules: the limits are requests per five minutes. */
export const EDGE_RATE_WINDOW_SECONDS = 300;

/**
 * Rules of the AWS common rule set that inspect the request body. Koerier's bodies are events whose
 * data is opaque to it (a `<script>` or `../` in a partner's data is not an attack on Koerier), and
 * events are legitimately larger than the set's 8 KB body limit, so these only count: their
 * matches show in the WAF metrics and sampled requests, and nothing legitimate is blocked.
 */
export const COUNT_ONLY_COMMON_RULES = [
  'SizeRestrictions_BODY',
  'CrossSiteScripting_BODY',
  'GenericLFI_BODY',
  'GenericRFI_BODY',
  'EC2MetaDataSSRF_BODY',
] as const;

export interface EdgeWebAclProps {
  readonly rateLimitPerIp: number;
  readonly rateLimitPerAuthorization: number;
}

/** The CLOUDFRONT-scope web ACL: two rate-based rules and the AWS common rule set. */
export class EdgeWebAcl extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: EdgeWebAclProps) {
    super(scope, id);
    const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName: `koerier-${metricName}`,
    });
    // WAF can answer 429 itself, but prefixes custom headers with x-amzn-waf-, so no Retry-After;
    // the body at least has the problem shape.
    const rateLimited: wafv2.CfnWebACL.RuleActionProperty = {
      block: { customResponse: { responseCode: 429, customResponseBodyKey: 'rate-limited' } },
    };
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      description: 'Koerier API edge: rate limits per IP address and per Authorization header, AWS common rule set',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('edge'),
      customResponseBodies: {
        'rate-limited': {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            // Relative, like every problem type: this stack cannot know the distribution's domain,
            // since the distribution refers to this web ACL (and it may be shared: koerier:edgeWebAclArn).
            type: problemType('rate-limited'),
            title: 'Too Many Requests',
            status: 429,
            detail: `Too many requests in five minutes; wait up to ${EDGE_RATE_WINDOW_SECONDS} seconds.`,
          }),
        },
      },
      rules: [
        {
          // A coarse floor against floods from one address, whoever they claim to be. Koerier's own
          // limits are per client (EDU-20: not per IP address); this one only stops what is no client.
          name: 'rate-per-ip',
          priority: 0,
          action: rateLimited,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: props.rateLimitPerIp,
              evaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
            },
          },
          visibilityConfig: visibility('rate-per-ip'),
        },
        {
          // Per bearer token, i.e. per client for as long as it keeps its token. Requests without
          // an Authorization header are not counted here (WAF skips a request missing a key);
          // the rule above covers them.
          name: 'rate-per-authorization',
          priority: 1,
          action: rateLimited,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [{ header: { name: 'authorization', textTransformations: [{ priority: 0, type: 'NONE' }] } }],
              limit: props.rateLimitPerAuthorization,
              evaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
            },
          },
          visibilityConfig: visibility('rate-per-authorization'),
        },
        {
          name: 'aws-common-rule-set',
          priority: 2,
          overrideAction: { none: {} },
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: 'AWSManagedRulesCommonRuleSet',
              ruleActionOverrides: COUNT_ONLY_COMMON_RULES.map((name) => ({ name, actionToUse: { count: {} } })),
            },
          },
          visibilityConfig: visibility('aws-common-rule-set'),
        },
      ],
    });
  }
}

export interface KoerierEdgeStackProps extends StackProps, EdgeWebAclProps {}

/** The us-east-1 stack that holds the web ACL, because scope CLOUDFRONT exists only there. */
export class KoerierEdgeStack extends Stack {
  readonly webAcl: EdgeWebAcl;

  constructor(scope: Construct, id: string, props: KoerierEdgeStackProps) {
    super(scope, id, { description: 'Koerier: AWS WAF web ACL (scope CLOUDFRONT) for the API edge', ...props });
    if (this.region !== 'us-east-1')
      throw new Error(`the edge stack must be deployed to us-east-1 (AWS WAF scope CLOUDFRONT), not ${this.region}`);
    this.webAcl = new EdgeWebAcl(this, 'Edge', props);
  }
}

export interface ApiDistributionProps {
  /** The HTTP API's host name, `<api id>.execute-api.<region>.<the partition's URL suffix>`. */
  readonly apiDomainName: string;
  /** ARN of the CLOUDFRONT-scope web ACL. */
  readonly webAclArn: string;
  /** `koerier:edgeDomain` and `koerier:edgeCertificateArn`; absent: the cloudfront.net name, accepted by the operator (lib/tls-config.ts). */
  readonly name?: CloudFrontName | undefined;
}

/** CloudFront in front of the HTTP API: no caching, everything but Host forwarded, and the origin secret. */
export class ApiDistribution extends Construct {
  readonly distribution: cloudfront.Distribution;
  readonly originSecret: secretsmanager.Secret;
  readonly logs: s3.Bucket;
  /** The base URL callers use: `https://<koerier:edgeDomain>`, or `https://<id>.cloudfront.net` without one. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: ApiDistributionProps) {
    super(scope, id);
    this.originSecret = new secretsmanager.Secret(this, 'OriginSecret', {
      description: `Koerier: the ${ORIGIN_VERIFY_HEADER} header CloudFront adds, so the functions can refuse requests that went around it`,
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });
    Validations.of(this.originSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The origin header value is no credential (the callers authenticate with OAuth 2.0 tokens); it only proves a request came ' +
        'through CloudFront. CloudFront and the functions read it at deploy time, so rotating it means rotating and redeploying ' +
        'both (docs/OPERATIONS.md), which a rotation Lambda alone cannot do.',
    });
    this.logs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      // CloudFront's standard logs are written with an ACL.
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      encryption: s3.BucketEncryption.S3_MANAGED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.logs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This bucket holds the CloudFront access logs themselves; only CloudFront writes to it. Server access logs of a log bucket ' +
        'would need another bucket, whose own logs would need another, without end.',
    });
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Koerier API edge',
      defaultBehavior: {
        origin: new origins.HttpOrigin(props.apiDomainName, {
          protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
          customHeaders: { [ORIGIN_VERIFY_HEADER]: this.originSecret.secretValue.unsafeUnwrap() },
          // The HTTP API's own limit for an integration.
          readTimeout: Duration.seconds(30),
        }),
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        // A redirect would lose a POST's body: plain http is refused, not redirected.
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        // Nothing is cached; with caching off, CloudFront forwards Authorization under this policy.
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
      webAclId: props.webAclArn,
      ...cloudFrontViewerTls(this, props.name),
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      // aws-cdk-lib declares Bucket.isWebsite `boolean | undefined` but IBucket.isWebsite `boolean`, which
      // exactOptionalPropertyTypes tells apart; the class implements the interface all the same.
      logBucket: this.logs as s3.IBucket,
    });
    if (props.name === undefined) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          'The operator set koerier:allowCloudFrontDefaultCertificate: the distribution answers on its cloudfront.net name with the default ' +
          'certificate, for which AWS fixes a TLSv1 minimum; koerier:edgeDomain with koerier:edgeCertificateArn gives it TLSv1.2_2021 ' +
          '(docs/DEPLOYING.md, "TLS"). The origin side is TLSv1.2 only.',
      });
    }
    this.url = `https://${props.name?.domainName ?? this.distribution.distributionDomainName}`;
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'Koerier serves partners of Dutch public and education organisations, some with systems hosted outside the Netherlands; ' +
        'a geo restriction would refuse them by address, where Koerier admits callers by their OAuth 2.0 client identity.',
    });
  }
}
