/**
 * Trust on the wire (issue 12, items 5 and 6; docs/OPERATIONS.md "Signed deliveries" and
 * "Client certificate towards targets"), read from the CDK context beside lib/stack-config.ts:
 *
 *   koerier:signingKeys                 the KMS keys that sign deliveries, newest first (list or comma-separated):
 *                                       KMS key ARNs (ECC_NIST_P256, SIGN_VERIFY) and/or "stack", the key this
 *                                       stack creates; default ["stack"]; [] turns signing off
 *   koerier:clientCertificateSecretArn  the Secrets Manager secret holding the mTLS client certificate chain
 *                                       and key as one PEM text; absent: no certificate is presented
 */
import type { Construct } from 'constructs';

export interface TrustConfig {
  /** Newest first; `stack` stands for the signing key the stack creates. */
  readonly signingKeys: readonly string[];
  readonly clientCertificateSecretArn?: string;
}

export const trustContextKey = {
  signingKeys: 'koerier:signingKeys',
  clientCertificateSecretArn: 'koerier:clientCertificateSecretArn',
} as const;

/** The stack's own signing key in `koerier:signingKeys`. */
export const STACK_SIGNING_KEY = 'stack';

const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]{36}$/;
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/;

export class TrustConfigError extends Error {
  override name = 'TrustConfigError';
  constructor(readonly issues: readonly string[]) {
    super(issues.join('; '));
  }
}

export function readTrustConfig(scope: Construct): TrustConfig {
  const context = Object.fromEntries(
    Object.values(trustContextKey).map((key) => [key, scope.node.tryGetContext(key) as unknown]),
  );
  return parseTrustConfig(context);
}

/** Throws one TrustConfigError naming every bad key, with an example of a good value. */
export function parseTrustConfig(context: Readonly<Record<string, unknown>>): TrustConfig {
  const issues: string[] = [];
  const rawKeys = context[trustContextKey.signingKeys];
  let signingKeys: string[] = [STACK_SIGNING_KEY];
  if (rawKeys !== undefined) {
    const list =
      typeof rawKeys === 'string'
        ? rawKeys
            .split(',')
            .map((key) => key.trim())
            .filter(Boolean)
        : rawKeys;
    if (
      !Array.isArray(list) ||
      !list.every(
        (key): key is string => typeof key === 'string' && (key === STACK_SIGNING_KEY || KMS_KEY_ARN.test(key)),
      )
    ) {
      issues.push(
        `${trustContextKey.signingKeys} must list KMS key ARNs and/or "stack", newest first, e.g. ["arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab","stack"]`,
      );
    } else if (new Set(list).size !== list.length) {
      issues.push(`${trustContextKey.signingKeys} names a key twice`);
    } else {
      signingKeys = list;
    }
  }
  const secret = context[trustContextKey.clientCertificateSecretArn];
  if (secret !== undefined && (typeof secret !== 'string' || !SECRET_ARN.test(secret))) {
    issues.push(
      `${trustContextKey.clientCertificateSecretArn} must be a Secrets Manager secret ARN, e.g. arn:aws:secretsmanager:eu-central-1:123456789012:secret:koerier/mtls-AbCdEf`,
    );
  }
  if (issues.length > 0) throw new TrustConfigError(issues);
  return { signingKeys, ...(typeof secret === 'string' ? { clientCertificateSecretArn: secret } : {}) };
}
