/**
 * The operator and subscriber console in AWS (issue 16): the same static files as on the laptop
 * (console/, its TypeScript bundled by the local esbuild at synth time), in a private bucket behind
 * CloudFront with origin access control, and a `config.json` naming the API and the
 * organisation's OpenID Connect issuer and the console's public client there. The browser signs
 * in with the authorization code grant and PKCE; no client secret exists for it.
 */
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { DefaultStackSynthesizer, DockerImage, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as deployment from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import type * as Esbuild from 'esbuild';
import { cloudFrontViewerTls, type CloudFrontName } from './cloudfront-tls.js';

export interface ConsoleSiteProps {
  /** Where the repository's console/ folder is. */
  readonly consoleDir: string;
  readonly apiUrl: string;
  readonly issuer: string;
  readonly clientId: string;
  /** The scopes the console asks for, space-separated. */
  readonly scope: string;
  /** `koerier:consoleDomain` and `koerier:consoleCertificateArn`; absent: the cloudfront.net name, accepted by the operator (lib/tls-config.ts). */
  readonly name?: CloudFrontName | undefined;
}

export class ConsoleSite extends Construct {
  readonly distribution: cloudfront.Distribution;
  readonly bucket: s3.Bucket;
  /** What the browser reads as `config.json`: public values only (the client is public; PKCE, no secret). */
  readonly config: Readonly<Record<string, string>>;
  /** `https://<koerier:consoleDomain>`, or `https://<id>.cloudfront.net` without one: the console's origin, for CORS and sign-in redirects. */
  readonly origin: string;

  constructor(scope: Construct, id: string, props: ConsoleSiteProps) {
    super(scope, id);
    // The `as s3.IBucket` below: aws-cdk-lib declares Bucket.isWebsite `boolean | undefined` but IBucket.isWebsite
    // `boolean`, which exactOptionalPropertyTypes tells apart; the class implements the interface all the same.
    const logs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      encryption: s3.BucketEncryption.S3_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.bucket = new s3.Bucket(this, 'Files', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      encryption: s3.BucketEncryption.S3_MANAGED,
      serverAccessLogsBucket: logs as s3.IBucket,
      serverAccessLogsPrefix: 'files/',
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: false,
    });
    const headers = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: 'Koerier console: no inline script, calls only to the API and the identity provider',
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          // The console calls the API and the issuer (discovery, tokens): both https, the API's URL known only at deploy time.
          contentSecurityPolicy: `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' https:; frame-ancestors 'none'; form-action 'self'`,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
    });
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Koerier console',
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket as s3.IBucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: headers,
      },
      defaultRootObject: 'console/index.html',
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      // Without a name of its own no minimumProtocolVersion: on the cloudfront.net name the policy is
      // TLSv1, fixed by AWS, and CDK ignores the setting with a warning (issue 28).
      ...cloudFrontViewerTls(this, props.name),
      enableLogging: true,
      logBucket: logs as s3.IBucket,
      logFilePrefix: 'cloudfront/',
    });
    if (props.name === undefined) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          "The operator set koerier:allowCloudFrontDefaultCertificate: on its cloudfront.net name CloudFront's default certificate has the fixed TLSv1 policy; koerier:consoleDomain with koerier:consoleCertificateArn gives it TLSv1.2_2021 (docs/DEPLOYING.md, TLS).",
      });
    }
    this.origin = `https://${props.name?.domainName ?? this.distribution.distributionDomainName}`;
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason: 'Operators and partners sign in with their organisation identity wherever they are; no geo restriction.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR2',
      reason:
        'Static files only; every action goes to the API, which has its own protection (koerier:edgeProtection) and requires a token.',
    });

    this.config = { apiUrl: props.apiUrl, issuer: props.issuer, clientId: props.clientId, scope: props.scope };
    const files = new deployment.BucketDeployment(this, 'Upload', {
      destinationBucket: this.bucket as s3.IBucket,
      destinationKeyPrefix: 'console/',
      distribution: this.distribution,
      distributionPaths: ['/console/*'],
      sources: [
        deployment.Source.asset(props.consoleDir, {
          bundling: {
            // Never used: the local esbuild bundles (no Docker), as for the functions.
            image: DockerImage.fromRegistry('node:24'),
            local: { tryBundle: (outputDir) => bundleConsoleInto(props.consoleDir, outputDir) },
          },
        }),
        deployment.Source.jsonData('config.json', this.config),
      ],
    });
    // BucketDeployment's function is a singleton at stack level, with CDK's own role and runtime.
    const reason =
      "CDK's BucketDeployment copies the console's files at deploy time with its own custom-resource function and role: the managed " +
      'basic-execution policy, S3 actions and object wildcards on the CDK asset bucket and the console bucket, and the runtime CDK chooses. It runs only during deployments.';
    for (const id of [
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'AwsSolutions-IAM5[Action::s3:GetBucket*]',
      'AwsSolutions-IAM5[Action::s3:GetObject*]',
      'AwsSolutions-IAM5[Action::s3:List*]',
      'AwsSolutions-IAM5[Action::s3:Abort*]',
      'AwsSolutions-IAM5[Action::s3:DeleteObject*]',
      assetObjectsFinding(Stack.of(this)),
      `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*]`,
      'AwsSolutions-IAM5[Resource::*]',
    ]) {
      Validations.of(files.handlerRole).acknowledge({ id, reason });
    }
    const handler = Stack.of(this).node.children.find((child) =>
      child.node.id.startsWith('Custom::CDKBucketDeployment'),
    );
    if (handler) Validations.of(handler).acknowledge({ id: 'AwsSolutions-L1', reason });
  }

  get url(): string {
    return `${this.origin}/console/`;
  }
}

/**
 * The IAM5 finding for BucketDeployment's read of the CDK asset bucket's objects, named as cdk-nag
 * names it: with the stack's partition, account and region written out once they are known (every
 * `cdk deploy`), as CloudFormation pseudo parameters when the synth is environment-agnostic. A
 * name with the pseudo parameters alone silenced nothing in a concrete region (issue 28).
 */
function assetObjectsFinding(stack: Stack): string {
  const known = (value: string, pseudo: string): string => (Token.isUnresolved(value) ? `<${pseudo}>` : value);
  const synthesizer = stack.synthesizer;
  const qualifier =
    (synthesizer instanceof DefaultStackSynthesizer ? synthesizer.bootstrapQualifier : undefined) ??
    DefaultStackSynthesizer.DEFAULT_QUALIFIER;
  const bucket = `cdk-${qualifier}-assets-${known(stack.account, 'AWS::AccountId')}-${known(stack.region, 'AWS::Region')}`;
  return `AwsSolutions-IAM5[Resource::arn:${known(stack.partition, 'AWS::Partition')}:s3:::${bucket}/*]`;
}

/** esbuild at synth time, as lib/bundling.ts does for the functions. */
function bundleConsoleInto(consoleDir: string, outputDir: string): boolean {
  // Synchronous, as CDK's local bundling is; esbuild is a development dependency, there where cdk synth runs.
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof Esbuild;
  mkdirSync(outputDir, { recursive: true });
  buildSync({
    entryPoints: [join(consoleDir, 'src', 'main.ts')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    outfile: join(outputDir, 'console.js'),
  });
  for (const name of ['index.html', 'console.css']) cpSync(join(consoleDir, name), join(outputDir, name));
  return true;
}
