/** Push delivery settings (issue 5); the schedule and its defaults are documented in docs/OPERATIONS.md. */
import { settingEnv } from './setting-names.js';
import type { SettingsReader } from './settings-reader.js';

export const SEVEN_DAYS = 7 * 24 * 3600;

export interface DeliverySettings {
  readonly retry: {
    readonly initialDelaySeconds: number;
    readonly maxDelaySeconds: number;
    readonly windowSeconds: number;
  };
  readonly connectTimeoutMs: number;
  readonly responseTimeoutMs: number;
  readonly maxResponseBytes: number;
  readonly breaker: { readonly failureThreshold: number; readonly cooldownSeconds: number };
  readonly suspendAfterSeconds: number;
  readonly historySeconds: number;
  readonly deadLetterRetentionSeconds: number;
  readonly outboundCaFile?: string;
  /** Where the mTLS client certificate and key are (`settingEnv.clientCertificate`); unset: none is presented. */
  readonly clientCertificate?: string;
  /** The signing keys, newest first (`settingEnv.signingKeys`); empty: subscriptions cannot ask for signed deliveries. */
  readonly signingKeys: readonly string[];
  /** Write CloudWatch Embedded Metric Format records (in Lambda only). */
  readonly emitMetrics: boolean;
}

export function readDeliverySettings(settings: SettingsReader): DeliverySettings {
  const outboundCaFile = settings.text(settingEnv.outboundCaFile);
  const clientCertificate = settings.text(settingEnv.clientCertificate);
  if (
    clientCertificate &&
    !/^(file:.+|arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+)$/.test(clientCertificate)
  ) {
    settings.issues.push(
      `${settingEnv.clientCertificate} must be the ARN of a Secrets Manager secret or file:<path>, got ${JSON.stringify(clientCertificate)}`,
    );
  }
  const signingKeys = settings.list(settingEnv.signingKeys);
  if (new Set(signingKeys).size !== signingKeys.length)
    settings.issues.push(`${settingEnv.signingKeys} names a key twice`);
  return {
    retry: {
      initialDelaySeconds: settings.integer(settingEnv.deliveryRetryInitialSeconds, 30, 1, 43_200),
      maxDelaySeconds: settings.integer(settingEnv.deliveryRetryMaxDelaySeconds, 4 * 3600, 1, 43_200),
      windowSeconds: settings.integer(settingEnv.deliveryRetryWindowSeconds, 24 * 3600, 1, 365 * 24 * 3600),
    },
    connectTimeoutMs: settings.integer(settingEnv.deliveryConnectTimeoutMs, 5_000, 100, 60_000),
    responseTimeoutMs: settings.integer(settingEnv.deliveryResponseTimeoutMs, 10_000, 100, 120_000),
    maxResponseBytes: settings.integer(settingEnv.deliveryMaxResponseBytes, 64 * 1024, 1024, 10 * 1024 * 1024),
    breaker: {
      failureThreshold: settings.integer(settingEnv.deliveryBreakerFailures, 5, 1, 1000),
      cooldownSeconds: settings.integer(settingEnv.deliveryBreakerCooldownSeconds, 60, 1, 3600),
    },
    suspendAfterSeconds: settings.integer(settingEnv.deliverySuspendAfterSeconds, 5 * 24 * 3600, 1, 365 * 24 * 3600),
    historySeconds: settings.integer(settingEnv.deliveryHistorySeconds, SEVEN_DAYS, 60, 365 * 24 * 3600),
    deadLetterRetentionSeconds: settings.integer(
      settingEnv.deadLetterRetentionSeconds,
      30 * 24 * 3600,
      60,
      365 * 24 * 3600,
    ),
    ...(outboundCaFile ? { outboundCaFile } : {}),
    ...(clientCertificate ? { clientCertificate } : {}),
    signingKeys,
    // Set by the Lambda runtime: CloudWatch turns the metric records in the log into metrics.
    emitMetrics: Boolean(settings.env['AWS_LAMBDA_FUNCTION_NAME']),
  };
}
