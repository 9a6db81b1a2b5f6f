/**
 * The API's public name (issue 31, item 1): `koerier:publicDomain`, with its ACM certificate in
 * `koerier:publicCertificateArn`. The stack then creates an API Gateway custom domain name for the
 * HTTP API (lib/constructs/public-domain.ts), and every link Koerier hands out names that host:
 * `dataref`, the validation callback, operational events' `source`, the API description's
 * `servers`, the console's API URL, the stack's outputs. Without it, the execute-api URL,
 * everywhere alike (or the CloudFront name with `cloudfront-waf`, which has `koerier:edgeDomain`).
 *
 * Read from the CDK context with the rest of lib/stack-config.ts. The certificate's region is
 * checked against the stack's in lib/constructs/public-domain.ts, where the region is known.
 */
import { acmCertificateArnProblem, hostNameProblem } from './setting-checks.js';

export const publicDomainContextKey = {
  publicDomain: 'koerier:publicDomain',
  publicCertificateArn: 'koerier:publicCertificateArn',
} as const;

export interface PublicDomainConfig {
  /** The host name partners call, e.g. `koerier.gemeente.nl`. */
  readonly domainName: string;
  /** Its ACM certificate, in the stack's region (API Gateway regional domain names take it from there). */
  readonly certificateArn: string;
}

/**
 * Validates the two settings, pushing one message per problem onto `issues`. `edge`: whether
 * `koerier:edgeProtection` puts CloudFront in front of the API (undefined when that setting is
 * itself wrong, and reported there).
 */
export function parsePublicDomainConfig(
  context: Readonly<Record<string, unknown>>,
  issues: string[],
  edge: boolean | undefined,
): PublicDomainConfig | undefined {
  const key = publicDomainContextKey;
  const domain = context[key.publicDomain];
  const certificate = context[key.publicCertificateArn];
  if (domain === undefined && certificate === undefined) return undefined;
  const before = issues.length;
  if (edge === true) {
    // CloudFront with its web ACL is the public door then; a second, regional name would go around the ACL.
    issues.push(
      `${key.publicDomain} names a regional API Gateway domain, and koerier:edgeProtection "cloudfront-waf" puts the API behind CloudFront: ` +
        `give the name as koerier:edgeDomain (with koerier:edgeCertificateArn in us-east-1) instead`,
    );
    return undefined;
  }
  if (typeof domain !== 'string' || domain.trim() === '') {
    issues.push(
      `${key.publicDomain} is required with ${key.publicCertificateArn}: the host name partners call, e.g. koerier.gemeente.nl`,
    );
  } else {
    const name = domain.trim();
    const problem = hostNameProblem(name) ?? publicNameProblem(name);
    if (problem) issues.push(`${key.publicDomain} ${problem}, got ${JSON.stringify(domain)}`);
  }
  if (typeof certificate !== 'string' || certificate.trim() === '') {
    issues.push(
      `${key.publicCertificateArn} is required with ${key.publicDomain}: an ACM certificate for that name in the stack's region`,
    );
  } else {
    const problem = acmCertificateArnProblem(certificate.trim());
    if (problem) issues.push(`${key.publicCertificateArn} ${problem}, got ${JSON.stringify(certificate)}`);
  }
  if (issues.length > before) return undefined;
  return { domainName: (domain as string).trim(), certificateArn: (certificate as string).trim() };
}

/** What a host name that passes as one still lacks to be an API Gateway custom domain name. */
function publicNameProblem(name: string): string | undefined {
  if (name.includes(':')) return 'must be a host name without a port (API Gateway serves it on 443)';
  if (name !== name.toLowerCase()) return 'must be in lower case';
  if (!name.includes('.')) return 'must be a fully qualified name such as koerier.gemeente.nl';
  return undefined;
}
