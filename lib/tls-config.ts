/**
 * TLS where Koerier terminates it (EDU-4: the Edukoppeling profile asks for TLS per the UBV TLS
 * guideline, TLS 1.2 or higher with the NCSC's settings; issue 36, item 7). Read from the CDK
 * context with the rest of lib/stack-config.ts:
 *
 *   koerier:edgeDomain                      with cloudfront-waf: the API's name at CloudFront, e.g. koerier.gemeente.nl
 *   koerier:edgeCertificateArn              its ACM certificate, in us-east-1 (CloudFront's region)
 *   koerier:consoleDomain                   with a console: the console's name, e.g. console.koerier.gemeente.nl
 *   koerier:consoleCertificateArn           its ACM certificate, in us-east-1
 *   koerier:allowCloudFrontDefaultCertificate  true: accept the cloudfront.net name's TLS 1.0 where no name is given
 *
 * A CloudFront distribution on its cloudfront.net name uses CloudFront's default certificate,
 * whose security policy AWS fixes at TLSv1; only a name of one's own with an ACM certificate can
 * have TLSv1.2_2021 (TLS 1.2 and 1.3, forward-secret AEAD ciphers only). So a CloudFront
 * distribution without a name is refused at synth, unless the operator accepts the limit in
 * writing with koerier:allowCloudFrontDefaultCertificate: a MUST is not broken by a default.
 * The API's own execute-api endpoint takes TLS 1.2 only (AWS fixes that for HTTP APIs); a custom
 * API Gateway domain name (issue 31) is to use the TLS_1_2 security policy, API_GATEWAY_TLS_POLICY.
 */

/** CloudFront's viewer policy for a name with its own certificate: TLS 1.2 and 1.3, ECDHE with AES-GCM or ChaCha20-Poly1305. */
export const CLOUDFRONT_MINIMUM_PROTOCOL = 'TLSv1.2_2021';
/** API Gateway's security policy for a custom domain name: TLS 1.2. */
export const API_GATEWAY_TLS_POLICY = 'TLS_1_2';

export interface CloudFrontName {
  /** The host name viewers use, e.g. `koerier.gemeente.nl`. */
  readonly domainName: string;
  /** An ACM certificate for that name in us-east-1, where CloudFront takes its certificates from. */
  readonly certificateArn: string;
}

export interface TlsConfig {
  /** The API edge's name (with `koerier:edgeProtection` `cloudfront-waf`). */
  readonly edge?: CloudFrontName;
  /** The console's name (with `koerier:consoleClientId` or `koerier:consoleUserPool`). */
  readonly console?: CloudFrontName;
  /** The operator accepts CloudFront's default certificate (TLSv1) for a distribution given no name. */
  readonly allowCloudFrontDefaultCertificate: boolean;
}

export const tlsContextKey = {
  edgeDomain: 'koerier:edgeDomain',
  edgeCertificateArn: 'koerier:edgeCertificateArn',
  consoleDomain: 'koerier:consoleDomain',
  consoleCertificateArn: 'koerier:consoleCertificateArn',
  allowCloudFrontDefaultCertificate: 'koerier:allowCloudFrontDefaultCertificate',
} as const;

/** Lower-case DNS labels, at least two, no wildcard: the one name a distribution answers to. */
const HOST_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const US_EAST_1_CERTIFICATE = /^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[0-9a-f-]{36}$/;

/** Which CloudFront distributions the deployment has, from the settings read before. */
export interface CloudFrontUse {
  /** Undefined when koerier:edgeProtection itself is wrong (reported there): its names are then not checked. */
  readonly edge: boolean | undefined;
  readonly console: boolean;
}

/** Validates the TLS settings against the distributions in use, pushing one message per problem onto `issues`. */
export function parseTlsConfig(
  context: Readonly<Record<string, unknown>>,
  issues: string[],
  uses: CloudFrontUse,
): TlsConfig {
  const key = tlsContextKey;
  const allowRaw = context[key.allowCloudFrontDefaultCertificate];
  const allow = allowRaw === true || allowRaw === 'true';
  if (allowRaw !== undefined && !allow && allowRaw !== false && allowRaw !== 'false') {
    issues.push(`${key.allowCloudFrontDefaultCertificate} must be true or false, got ${JSON.stringify(allowRaw)}`);
  }
  const edge = cloudFrontName(context, issues, {
    domainKey: key.edgeDomain,
    certificateKey: key.edgeCertificateArn,
    inUse: uses.edge,
    what: 'koerier:edgeProtection "cloudfront-waf" puts the API behind CloudFront',
    notInUse: 'applies only with koerier:edgeProtection "cloudfront-waf"',
    allow,
  });
  const console = cloudFrontName(context, issues, {
    domainKey: key.consoleDomain,
    certificateKey: key.consoleCertificateArn,
    inUse: uses.console,
    what: 'the console (koerier:consoleClientId or koerier:consoleUserPool) is served by CloudFront',
    notInUse: 'applies only with a console (koerier:consoleClientId or koerier:consoleUserPool)',
    allow,
  });
  const unnamed = (uses.edge && edge === undefined) || (uses.console && console === undefined);
  if (allow && !unnamed && uses.edge !== undefined) {
    issues.push(
      `${key.allowCloudFrontDefaultCertificate} accepts TLS 1.0 on a cloudfront.net name, but no CloudFront distribution of this deployment is left without a name of its own: remove it`,
    );
  }
  return { ...(edge ? { edge } : {}), ...(console ? { console } : {}), allowCloudFrontDefaultCertificate: allow };
}

interface NameRule {
  readonly domainKey: string;
  readonly certificateKey: string;
  readonly inUse: boolean | undefined;
  readonly what: string;
  readonly notInUse: string;
  readonly allow: boolean;
}

function cloudFrontName(
  context: Readonly<Record<string, unknown>>,
  issues: string[],
  rule: NameRule,
): CloudFrontName | undefined {
  const domain = context[rule.domainKey];
  const certificate = context[rule.certificateKey];
  if (rule.inUse === undefined) return undefined;
  if (domain === undefined && certificate === undefined) {
    if (rule.inUse && !rule.allow) {
      issues.push(
        `${rule.what}, whose cloudfront.net name accepts TLS 1.0 and 1.1, and EDU-4 asks for TLS 1.2 or higher: give ${rule.domainKey} (its name) and ` +
          `${rule.certificateKey} (an ACM certificate for that name in us-east-1), which get the ${CLOUDFRONT_MINIMUM_PROTOCOL} policy, or accept the ` +
          `cloudfront.net name's limit with ${tlsContextKey.allowCloudFrontDefaultCertificate} true (docs/DEPLOYING.md, "TLS")`,
      );
    }
    return undefined;
  }
  if (!rule.inUse) {
    for (const [name, value] of [
      [rule.domainKey, domain],
      [rule.certificateKey, certificate],
    ] as const) {
      if (value !== undefined) issues.push(`${name} ${rule.notInUse}`);
    }
    return undefined;
  }
  const domainOk = typeof domain === 'string' && HOST_NAME.test(domain);
  const certificateOk = typeof certificate === 'string' && US_EAST_1_CERTIFICATE.test(certificate);
  if (!domainOk) {
    issues.push(
      `${rule.domainKey} must be a host name in lower case, e.g. koerier.gemeente.nl, given with ${rule.certificateKey}, got ${JSON.stringify(domain ?? null)}`,
    );
  }
  if (!certificateOk) {
    issues.push(
      `${rule.certificateKey} must be the ARN of an ACM certificate in us-east-1 (CloudFront takes its certificates from there), e.g. ` +
        `arn:<partition>:acm:us-east-1:<account>:certificate/<id>, given with ${rule.domainKey}, got ${JSON.stringify(certificate ?? null)}`,
    );
  }
  return domainOk && certificateOk ? { domainName: domain, certificateArn: certificate } : undefined;
}
