/**
 * The viewer side of a CloudFront distribution's TLS (EDU-4, lib/tls-config.ts): with a name of its
 * own, that name, its ACM certificate (us-east-1) and TLSv1.2_2021 (CLOUDFRONT_MINIMUM_PROTOCOL), over
 * SNI; without one, CloudFront's default certificate on the cloudfront.net name, which only an
 * operator's koerier:allowCloudFrontDefaultCertificate lets through synth.
 */
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type { Construct } from 'constructs';
import type { CloudFrontName } from '../tls-config.js';

export type { CloudFrontName } from '../tls-config.js';

type ViewerTls = Pick<
  cloudfront.DistributionProps,
  'domainNames' | 'certificate' | 'minimumProtocolVersion' | 'sslSupportMethod'
>;

export function cloudFrontViewerTls(scope: Construct, name: CloudFrontName | undefined): ViewerTls {
  if (name === undefined) return {};
  return {
    domainNames: [name.domainName],
    certificate: acm.Certificate.fromCertificateArn(scope, 'Certificate', name.certificateArn),
    minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
    sslSupportMethod: cloudfront.SSLMethod.SNI,
  };
}
