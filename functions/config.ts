/**
 * Koerier's runtime configuration: one environment record read once into a typed, validated
 * object. `loadConfig(env)` is the one place that reads the settings: the AWS composition root
 * (functions/composition/aws-dependencies.ts) passes `process.env` once per container, the laptop
 * host its own record. The readers per concern live in functions/config/; the variable names in
 * `settingEnv` (functions/config/setting-names.ts), which the CDK stack and the laptop host set.
 */
import type { PublishGrants } from './core/auth/publish-grants.js';
import type { SinkCredentialPolicy } from './core/credentials/sink-credential.js';
import { DEFAULT_QUOTAS, QUOTA_BOUNDS, type QuotaLimits } from './core/quotas/client-quotas.js';
import type { ValidationHandshakePolicy } from './core/webhooks/handshake-policy.js';
import { parseEntitlements, type Entitlements } from './core/subscriptions/entitlements.js';
import { readAuthSettings, readPublishGrants, type AuthSettings } from './config/auth-settings.js';
import { readDeliverySettings, SEVEN_DAYS, type DeliverySettings } from './config/delivery-settings.js';
import { readOutboundPorts, readSinkCredentialPolicy, readValidationHandshake } from './config/protection-settings.js';
import { resourceNamesFrom, type ResourceNames } from './config/resource-names.js';
import { readPublicBaseUrl } from './config/public-base-url.js';
import { settingEnv } from './config/setting-names.js';
import { SettingsReader, type Env } from './config/settings-reader.js';
import { DEFAULT_ARCHIVE_RETENTION_DAYS } from './config/resources.js';
import { SETTLING_WINDOW_MS } from './core/delivery-message/ordered-outbox.js';

export { accessTokenRules, type AuthSettings } from './config/auth-settings.js';
export type { DeliverySettings } from './config/delivery-settings.js';
export { DEFAULT_OUTBOUND_PORTS, parsePortList } from './config/protection-settings.js';
export { resourceNamesFrom, type ResourceNames } from './config/resource-names.js';
export { settingEnv } from './config/setting-names.js';
export { ConfigError, list, type Env } from './config/settings-reader.js';

export interface KoerierConfig {
  readonly auth: AuthSettings;
  readonly allowedOrigins: readonly string[];
  readonly webhookOrigin: string;
  readonly publishRatePerMinute: number;
  /** The settling window of ordered lanes (docs/ORDERING.md, "Acceptance order"). */
  readonly orderingSettlingMs: number;
  /** Largest event (JSON format text) the ingest accepts; above `inlineEventBytes` its data goes to the claim check. */
  readonly maxEventBytes: number;
  /** Events larger than this travel by reference (EDU-1, CE-14, CE-15); at most what a queue message carries. */
  readonly inlineEventBytes: number;
  /** The largest event a queue message carries (SQS's limit less the delivery envelope). */
  readonly maxQueuedEventBytes: number;
  readonly idempotency: { readonly ttlSeconds: number; readonly lockSeconds: number };
  /** Which event types each subscriber may receive (EDU-13), parsed once here. */
  readonly entitlements: Entitlements;
  readonly publishGrants: PublishGrants;
  /** How long a function uses its copy of the partner directory (functions/core/partners/partner-directory.ts). */
  readonly partnersRefreshSeconds: number;
  readonly allowLoopbackSinks: boolean;
  readonly delivery: DeliverySettings;
  /** The base of every link Koerier hands out, `https://<host>/v1` (functions/config/public-base-url.ts); '' when unset. */
  readonly publicBaseUrl: string;
  /** The `source` of Koerier's own operational events (core/operations): the setting, else the public base URL, else a URN of the webhook origin. */
  readonly operationsSource: string;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** The deployment's stack name (the laptop host: `koerier-local`). */
  readonly stackName: string;
  readonly validationAgreedClients: readonly string[];
  /** Whose push subscriptions skip the handshake by default: the deployment's profile (functions/core/webhooks/handshake-policy.ts). */
  readonly validationHandshake: ValidationHandshakePolicy;
  readonly localKeysDir?: string;
  /** The sending side of the webhook validation handshake (WH-4). */
  readonly handshake: {
    readonly timeoutSeconds: number;
    readonly windowSeconds: number;
    readonly requestRatePerMinute?: number;
  };
  /** Edge protection: the management routes' per-client throttle, and CloudFront's origin header value. */
  readonly manageRatePerMinute: number;
  /** The ZGW Notificaties API adapter (issue 34): how old (by `iat`) a client's token may be. */
  readonly zgw: { readonly maxTokenAgeSeconds: number };
  readonly originVerifySecret?: string;
  /** Which sink credentials subscriptions may carry (WH-3, EDU-4). */
  readonly sinkCredentials: SinkCredentialPolicy;
  /** Ports a sink or token URL may name (review item 19). */
  readonly outboundPorts: readonly number[];
  /** Where the tables, queues and keys this function was granted are. */
  readonly resources: ResourceNames;
  /** Long polls at once (docs/PULL.md, "Capacity"). */
  readonly pull: { readonly maxPollsPerSubscription: number; readonly maxPollsPerClient: number };
  /** The event archive (docs/REPLAY.md): how long it keeps events, which bounds every replay. */
  readonly archive: { readonly retentionDays: number };
  /** Per-client quotas' defaults (functions/core/quotas); a partner's own in the partner directory win. */
  readonly quotas: QuotaLimits;
  /** Out-of-band alerts (SELF-3): the From address (SES in AWS), and on the laptop the folder the e-mail is written to. */
  readonly alerts: { readonly sender?: string; readonly mailDir?: string };
}

/** 13 days: a day less than SQS keeps a message (functions/config/resources.ts `retentionSeconds`). */
export const MAX_IDEMPOTENCY_TTL_SECONDS = 13 * 24 * 3600;
/** The SQS message limit we design for (the long-standing 256 KiB, which every emulator honours). */
export const SQS_MESSAGE_LIMIT_BYTES = 256 * 1024;
/** Room kept in every queue message for the delivery envelope and message attributes. */
export const QUEUE_MESSAGE_MARGIN_BYTES = 8 * 1024;
/** Lambda's synchronous request limit: no event larger than this can reach a function through API Gateway. */
export const LAMBDA_REQUEST_LIMIT_BYTES = 6_291_456;
/**
 * The default largest event: 4 MiB, which reaches the ingest in every content mode — API Gateway
 * base64-encodes a CloudEvents body into the 6 MiB Lambda request, leaving about 4.5 MiB.
 */
export const DEFAULT_MAX_EVENT_BYTES = 4 * 1024 * 1024;
/** The event archive's retention (issue 13: 30 days by default, functions/config/resources.ts, which derives the claim check's from it); at most ten years. */
export { DEFAULT_ARCHIVE_RETENTION_DAYS };
export const MAX_ARCHIVE_RETENTION_DAYS = 3650;
/** CE-14: the size every intermediary must forward; the default inline threshold. */
export const DEFAULT_INLINE_EVENT_BYTES = 64 * 1024;

export function loadConfig(env: Env): KoerierConfig {
  const settings = new SettingsReader(env);
  const logLevel = (env[settingEnv.logLevel] ?? 'info').trim();
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
    settings.issues.push(`${settingEnv.logLevel} must be debug, info, warn or error`);
  const localKeysDir = settings.text(settingEnv.localKeysDir);
  const originVerifySecret = settings.text(settingEnv.originVerifySecret);
  const webhookRequestRate = settings.text(settingEnv.webhookRequestRate);
  const sinkCredentials = readSinkCredentialPolicy(settings);
  const publicBaseUrl = readPublicBaseUrl(settings);
  const alertSender = settings.text(settingEnv.alertSender);
  const alertMailDir = settings.text(settingEnv.alertMailDir);

  const config: KoerierConfig = {
    auth: readAuthSettings(settings),
    allowedOrigins: settings.list(settingEnv.allowedOrigins),
    webhookOrigin: settings.text(settingEnv.webhookOrigin) || 'koerier',
    publishRatePerMinute: settings.integer(settingEnv.publishRatePerMinute, 6000, 1, 1_000_000),
    orderingSettlingMs: settings.integer(settingEnv.orderingSettlingMs, SETTLING_WINDOW_MS, 0, 60_000),
    maxEventBytes: settings.integer(
      settingEnv.maxEventBytes,
      DEFAULT_MAX_EVENT_BYTES,
      1024,
      LAMBDA_REQUEST_LIMIT_BYTES,
    ),
    // A queued event must still fit a delivery message with its envelope, or it would fail in the router.
    inlineEventBytes: settings.integer(
      settingEnv.inlineEventBytes,
      DEFAULT_INLINE_EVENT_BYTES,
      DEFAULT_INLINE_EVENT_BYTES,
      SQS_MESSAGE_LIMIT_BYTES - QUEUE_MESSAGE_MARGIN_BYTES,
    ),
    maxQueuedEventBytes: SQS_MESSAGE_LIMIT_BYTES - QUEUE_MESSAGE_MARGIN_BYTES,
    idempotency: {
      // A delivery retries for at most the key's lifetime, and SQS keeps a message 14 days: a
      // longer lifetime would let SQS drop a delivery still retrying, unseen.
      ttlSeconds: settings.integer(settingEnv.idempotencyTtlSeconds, SEVEN_DAYS, 60, MAX_IDEMPOTENCY_TTL_SECONDS),
      // Longer than any HTTP function may run (30 s), so no lock lapses under a request still running.
      lockSeconds: settings.integer(settingEnv.idempotencyLockSeconds, 60, 31, 3600),
    },
    entitlements: checkedEntitlements(settings.text(settingEnv.entitlements) || '{}', settings),
    publishGrants: readPublishGrants(settings),
    // "Within a minute" (issue 12): a change reaches every function by the end of this interval.
    partnersRefreshSeconds: settings.integer(settingEnv.partnersRefreshSeconds, 30, 1, 60),
    allowLoopbackSinks: env[settingEnv.allowLoopbackSinks] === 'true',
    delivery: readDeliverySettings(settings),
    pull: {
      maxPollsPerSubscription: settings.integer(settingEnv.pullMaxPollsPerSubscription, 5, 1, 100),
      maxPollsPerClient: settings.integer(settingEnv.pullMaxPollsPerClient, 10, 1, 1000),
    },
    archive: {
      retentionDays: settings.integer(
        settingEnv.archiveRetentionDays,
        DEFAULT_ARCHIVE_RETENTION_DAYS,
        1,
        MAX_ARCHIVE_RETENTION_DAYS,
      ),
    },
    quotas: {
      maxPullSubscriptions: quota(settings, settingEnv.quotaMaxPullSubscriptions, 'maxPullSubscriptions'),
      maxConcurrentReplays: quota(settings, settingEnv.quotaMaxConcurrentReplays, 'maxConcurrentReplays'),
      uploadBytesPerHour: quota(settings, settingEnv.quotaUploadBytesPerHour, 'uploadBytesPerHour'),
    },
    publicBaseUrl,
    operationsSource:
      settings.text(settingEnv.operationsSource) ||
      publicBaseUrl ||
      `urn:koerier:${encodeURIComponent(settings.text(settingEnv.webhookOrigin) || 'koerier')}`,
    logLevel: logLevel as KoerierConfig['logLevel'],
    stackName: settings.text(settingEnv.stackName) || 'koerier-local',
    validationAgreedClients: settings.list(settingEnv.validationAgreedClients),
    validationHandshake: readValidationHandshake(settings, sinkCredentials),
    ...(localKeysDir ? { localKeysDir } : {}),
    handshake: {
      timeoutSeconds: settings.integer(settingEnv.validationTimeoutSeconds, 5, 1, 20),
      windowSeconds: settings.integer(settingEnv.validationWindowSeconds, 24 * 3600, 1, 30 * 24 * 3600),
      ...(webhookRequestRate
        ? { requestRatePerMinute: settings.integer(settingEnv.webhookRequestRate, 0, 1, 1_000_000) }
        : {}),
    },
    manageRatePerMinute: settings.integer(settingEnv.manageRatePerMinute, 600, 1, 1_000_000),
    zgw: { maxTokenAgeSeconds: settings.integer(settingEnv.zgwMaxTokenAgeSeconds, 3600, 60, 24 * 3600) },
    ...(originVerifySecret ? { originVerifySecret } : {}),
    sinkCredentials,
    outboundPorts: readOutboundPorts(settings),
    resources: resourceNamesFrom(env),
    alerts: {
      ...(alertSender ? { sender: alertSender } : {}),
      ...(alertMailDir ? { mailDir: alertMailDir } : {}),
    },
  };
  settings.check();
  return config;
}

function quota(settings: SettingsReader, name: string, quotaName: keyof QuotaLimits): number {
  return settings.integer(name, DEFAULT_QUOTAS[quotaName], QUOTA_BOUNDS[quotaName].min, QUOTA_BOUNDS[quotaName].max);
}

/** Fails at start-up, not in every router batch, when the entitlements have the wrong shape. */
function checkedEntitlements(json: string, settings: SettingsReader): Entitlements {
  try {
    return parseEntitlements(json);
  } catch (error) {
    settings.issues.push(`${settingEnv.entitlements}: ${(error as Error).message}`);
    return new Map();
  }
}
