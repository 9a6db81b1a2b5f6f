/**
 * Koerier's runtime configuration: read once from the environment into a typed, validated object.
 * Only handlers call `loadConfig`; adapters and the domain receive what they need as arguments.
 * The CDK stack and the laptop host set these variables (names in `settingEnv`).
 */
import {
  accessTokenTypeOf,
  accessTokenTypes,
  clientIdClaimProblem,
  DEFAULT_ACCESS_TOKEN_RULES,
  MAX_TOKEN_LIFETIME_LIMIT_SECONDS,
  type AccessTokenRules,
} from './core/auth/access-tokens.js';
import { parsePublishGrants, type PublishGrants } from './core/auth/publish-grants.js';
import { SINK_CREDENTIAL_POLICIES, type SinkCredentialPolicy } from './core/credentials/sink-credential.js';
import { parseEntitlements } from './core/subscriptions/entitlements.js';
import { resourceEnv, type BucketName, type KeyName, type QueueName, type TableName } from '../lib/resources.js';

export const settingEnv = {
  issuer: 'KOERIER_ISSUER',
  audience: 'KOERIER_AUDIENCE',
  jwksUrl: 'KOERIER_JWKS_URL',
  /** The issuer's token endpoint, shown in the API description (default: `<issuer>/oauth/token`). */
  tokenUrl: 'KOERIER_TOKEN_URL',
  // Which access tokens are accepted (review #17; functions/core/auth/access-tokens.ts `AccessTokenRules`).
  /** The JWT header `typ` required: `at+jwt` (default, RFC 9068) or `JWT` (issuers that label access tokens so). */
  accessTokenType: 'KOERIER_ACCESS_TOKEN_TYPE',
  /** The longest `exp - iat` accepted, in seconds (default 7200). */
  accessTokenMaxLifetimeSeconds: 'KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS',
  /** The one claim naming the client (default `client_id`; e.g. `azp` or `appid` for Entra ID). */
  clientIdClaim: 'KOERIER_CLIENT_ID_CLAIM',
  /** Comma-separated origins whose validation requests the ingest accepts (`*` for any). */
  allowedOrigins: 'KOERIER_ALLOWED_ORIGINS',
  /** The name Koerier gives itself in `WebHook-Request-Origin` when it validates or delivers. */
  webhookOrigin: 'KOERIER_WEBHOOK_ORIGIN',
  /** Requests per minute per publisher announced to validators (`WebHook-Allowed-Rate`). */
  publishRatePerMinute: 'KOERIER_PUBLISH_RATE_PER_MINUTE',
  maxEventBytes: 'KOERIER_MAX_EVENT_BYTES',
  idempotencyTtlSeconds: 'KOERIER_IDEMPOTENCY_TTL_SECONDS',
  idempotencyLockSeconds: 'KOERIER_IDEMPOTENCY_LOCK_SECONDS',
  /** JSON: which clients may publish under which sources (see functions/core/auth/publish-grants.ts). */
  publishers: 'KOERIER_PUBLISHERS',
  /** JSON: which clients may subscribe to which types and sources (see functions/core/subscriptions). */
  entitlements: 'KOERIER_ENTITLEMENTS',
  /** `true` on the laptop host only: lets sinks be plain-http loopback addresses. */
  allowLoopbackSinks: 'KOERIER_ALLOW_LOOPBACK_SINKS',
  /** Push delivery (docs/OPERATIONS.md): the retry schedule — first delay, longest single delay, how long retries go on. */
  deliveryRetryInitialSeconds: 'KOERIER_DELIVERY_RETRY_INITIAL_SECONDS',
  deliveryRetryMaxDelaySeconds: 'KOERIER_DELIVERY_RETRY_MAX_DELAY_SECONDS',
  deliveryRetryWindowSeconds: 'KOERIER_DELIVERY_RETRY_WINDOW_SECONDS',
  /** Bounds on one delivery request. */
  deliveryConnectTimeoutMs: 'KOERIER_DELIVERY_CONNECT_TIMEOUT_MS',
  deliveryResponseTimeoutMs: 'KOERIER_DELIVERY_RESPONSE_TIMEOUT_MS',
  deliveryMaxResponseBytes: 'KOERIER_DELIVERY_MAX_RESPONSE_BYTES',
  /** Circuit breaker per subscription: consecutive failures that open it, and its first cool-down. */
  deliveryBreakerFailures: 'KOERIER_DELIVERY_BREAKER_FAILURES',
  deliveryBreakerCooldownSeconds: 'KOERIER_DELIVERY_BREAKER_COOLDOWN_SECONDS',
  /** A target failing this long without one success is suspended. */
  deliverySuspendAfterSeconds: 'KOERIER_DELIVERY_SUSPEND_AFTER_SECONDS',
  /** How long attempt history and dead letters are kept. */
  deliveryHistorySeconds: 'KOERIER_DELIVERY_HISTORY_SECONDS',
  deadLetterRetentionSeconds: 'KOERIER_DEAD_LETTER_RETENTION_SECONDS',
  /** Tests only: a PEM file of extra CA certificates trusted for deliveries (a local certificate authority). */
  outboundCaFile: 'KOERIER_OUTBOUND_CA_FILE',
  /** Public base URL of the API, for links Koerier hands out (validation callbacks). */
  publicBaseUrl: 'KOERIER_PUBLIC_BASE_URL',
  logLevel: 'KOERIER_LOG_LEVEL',
  /** Comma-separated clients whose subscriptions may say `validation: "agreed"` (consent agreed out of band, WH-5). */
  validationAgreedClients: 'KOERIER_VALIDATION_AGREED_CLIENTS',
  /** Laptop host only: directory of the local key files that stand in for KMS (`<name>.key`). */
  localKeysDir: 'KOERIER_LOCAL_KEYS_DIR',
  /** Seconds Koerier waits for a target's answer to the validation request (WH-4). */
  validationTimeoutSeconds: 'KOERIER_VALIDATION_TIMEOUT_SECONDS',
  /** Seconds a target has to approve through the validation callback before the subscription counts as rejected. */
  validationWindowSeconds: 'KOERIER_VALIDATION_WINDOW_SECONDS',
  /** Requests per minute Koerier asks each target for (`WebHook-Request-Rate`); unset: not asked. */
  webhookRequestRate: 'KOERIER_WEBHOOK_REQUEST_RATE',
  /** Edge protection (docs/OPERATIONS.md): per-client requests per minute on the management routes, per container. */
  manageRatePerMinute: 'KOERIER_MANAGE_RATE_PER_MINUTE',
  /** Set behind CloudFront only: the value of its origin header; requests without it are refused before any work. */
  originVerifySecret: 'KOERIER_ORIGIN_VERIFY_SECRET',
  // Who may do what towards targets (issue 8, items 14 and 19).
  /** `oauth2-only` (default, Edukoppeling) or `bearer-or-oauth2`: which sink credentials subscriptions may carry. */
  sinkCredentials: 'KOERIER_SINK_CREDENTIALS',
  /** Comma-separated ports sinks and token URLs may name (default `443`); the laptop host may reach any port on loopback. */
  outboundPorts: 'KOERIER_OUTBOUND_PORTS',
} as const;

export interface KoerierConfig {
  readonly auth: {
    readonly issuer: string;
    readonly audience: string;
    readonly jwksUrl: URL;
    readonly tokenUrl: string;
    readonly tokenRules: AccessTokenRules;
  };
  readonly allowedOrigins: readonly string[];
  readonly webhookOrigin: string;
  readonly publishRatePerMinute: number;
  /** Largest event (serialised) the ingest stores in a queue message. */
  readonly maxEventBytes: number;
  readonly idempotency: { readonly ttlSeconds: number; readonly lockSeconds: number };
  readonly entitlementsJson: string;
  readonly publishGrants: PublishGrants;
  readonly allowLoopbackSinks: boolean;
  readonly delivery: DeliverySettings;
  readonly publicBaseUrl: string;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly validationAgreedClients: readonly string[];
  readonly localKeysDir?: string;
  /** The sending side of the webhook validation handshake (WH-4). */
  readonly handshake: { readonly timeoutSeconds: number; readonly windowSeconds: number; readonly requestRatePerMinute?: number };
  /** Edge protection: the management routes' per-client throttle, and CloudFront's origin header value. */
  readonly manageRatePerMinute: number;
  readonly originVerifySecret?: string;
  /** Which sink credentials subscriptions may carry (WH-3, EDU-4). */
  readonly sinkCredentials: SinkCredentialPolicy;
  /** Ports a sink or token URL may name (review item 19). */
  readonly outboundPorts: readonly number[];
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

const SEVEN_DAYS = 7 * 24 * 3600;
/** 13 days: a day less than SQS keeps a message (lib/resources.ts `retentionSeconds`). */
export const MAX_IDEMPOTENCY_TTL_SECONDS = 13 * 24 * 3600;
/** The SQS message limit we design for (the long-standing 256 KiB, which every emulator honours). */
export const SQS_MESSAGE_LIMIT_BYTES = 256 * 1024;
/** Room kept in every queue message for the delivery envelope and message attributes. */
export const QUEUE_MESSAGE_MARGIN_BYTES = 8 * 1024;

export function loadConfig(env: Env = process.env): KoerierConfig {
  const issues: string[] = [];
  const required = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) issues.push(`${name} is required`);
    return value ?? '';
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      issues.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return value;
  };

  const issuer = required(settingEnv.issuer);
  const audience = required(settingEnv.audience);
  const jwksRaw = required(settingEnv.jwksUrl);
  let jwksUrl = new URL('https://invalid.invalid/');
  if (jwksRaw) {
    try {
      jwksUrl = new URL(jwksRaw);
    } catch {
      issues.push(`${settingEnv.jwksUrl} must be a URL, got ${JSON.stringify(jwksRaw)}`);
    }
  }
  const logLevel = (env[settingEnv.logLevel] ?? 'info').trim();
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) issues.push(`${settingEnv.logLevel} must be debug, info, warn or error`);

  const config: KoerierConfig = {
    auth: {
      issuer,
      audience,
      jwksUrl,
      tokenUrl: env[settingEnv.tokenUrl]?.trim() || `${issuer.replace(/\/+$/, '')}/oauth/token`,
      tokenRules: readAccessTokenRules(env, issues),
    },
    allowedOrigins: list(env[settingEnv.allowedOrigins]),
    webhookOrigin: env[settingEnv.webhookOrigin]?.trim() || 'koerier',
    publishRatePerMinute: integer(settingEnv.publishRatePerMinute, 6000, 1, 1_000_000),
    // An accepted event must still fit a delivery message with its envelope, or it would fail in the router.
    maxEventBytes: integer(settingEnv.maxEventBytes, SQS_MESSAGE_LIMIT_BYTES - QUEUE_MESSAGE_MARGIN_BYTES, 1024, SQS_MESSAGE_LIMIT_BYTES - QUEUE_MESSAGE_MARGIN_BYTES),
    idempotency: {
      // A delivery retries for at most the key's lifetime, and SQS keeps a message 14 days: a
      // longer lifetime would let SQS drop a delivery still retrying, unseen.
      ttlSeconds: integer(settingEnv.idempotencyTtlSeconds, SEVEN_DAYS, 60, MAX_IDEMPOTENCY_TTL_SECONDS),
      // Longer than any HTTP function may run (30 s), so no lock lapses under a request still running.
      lockSeconds: integer(settingEnv.idempotencyLockSeconds, 60, 31, 3600),
    },
    entitlementsJson: checkedEntitlements(env[settingEnv.entitlements]?.trim() || '{}', issues),
    publishGrants: readPublishGrants(env[settingEnv.publishers], issues),
    allowLoopbackSinks: env[settingEnv.allowLoopbackSinks] === 'true',
    delivery: {
      retry: {
        initialDelaySeconds: integer(settingEnv.deliveryRetryInitialSeconds, 30, 1, 43_200),
        maxDelaySeconds: integer(settingEnv.deliveryRetryMaxDelaySeconds, 4 * 3600, 1, 43_200),
        windowSeconds: integer(settingEnv.deliveryRetryWindowSeconds, 24 * 3600, 1, 365 * 24 * 3600),
      },
      connectTimeoutMs: integer(settingEnv.deliveryConnectTimeoutMs, 5_000, 100, 60_000),
      responseTimeoutMs: integer(settingEnv.deliveryResponseTimeoutMs, 10_000, 100, 120_000),
      maxResponseBytes: integer(settingEnv.deliveryMaxResponseBytes, 64 * 1024, 1024, 10 * 1024 * 1024),
      breaker: {
        failureThreshold: integer(settingEnv.deliveryBreakerFailures, 5, 1, 1000),
        cooldownSeconds: integer(settingEnv.deliveryBreakerCooldownSeconds, 60, 1, 3600),
      },
      suspendAfterSeconds: integer(settingEnv.deliverySuspendAfterSeconds, 5 * 24 * 3600, 1, 365 * 24 * 3600),
      historySeconds: integer(settingEnv.deliveryHistorySeconds, SEVEN_DAYS, 60, 365 * 24 * 3600),
      deadLetterRetentionSeconds: integer(settingEnv.deadLetterRetentionSeconds, 30 * 24 * 3600, 60, 365 * 24 * 3600),
      ...(env[settingEnv.outboundCaFile]?.trim() ? { outboundCaFile: env[settingEnv.outboundCaFile]!.trim() } : {}),
      // Set by the Lambda runtime: CloudWatch turns the metric records in the log into metrics.
      emitMetrics: Boolean(env['AWS_LAMBDA_FUNCTION_NAME']),
    },
    publicBaseUrl: (env[settingEnv.publicBaseUrl]?.trim() || '').replace(/\/+$/, ''),
    logLevel: logLevel as KoerierConfig['logLevel'],
    validationAgreedClients: list(env[settingEnv.validationAgreedClients]),
    ...(env[settingEnv.localKeysDir]?.trim() ? { localKeysDir: env[settingEnv.localKeysDir]!.trim() } : {}),
    handshake: {
      timeoutSeconds: integer(settingEnv.validationTimeoutSeconds, 5, 1, 20),
      windowSeconds: integer(settingEnv.validationWindowSeconds, 24 * 3600, 1, 30 * 24 * 3600),
      ...(env[settingEnv.webhookRequestRate]?.trim() ? { requestRatePerMinute: integer(settingEnv.webhookRequestRate, 0, 1, 1_000_000) } : {}),
    },
    manageRatePerMinute: integer(settingEnv.manageRatePerMinute, 600, 1, 1_000_000),
    ...(env[settingEnv.originVerifySecret]?.trim() ? { originVerifySecret: env[settingEnv.originVerifySecret]!.trim() } : {}),
    sinkCredentials: readSinkCredentialPolicy(env[settingEnv.sinkCredentials], issues),
    outboundPorts: readOutboundPorts(env[settingEnv.outboundPorts], issues),
  };
  if (issues.length > 0) throw new ConfigError(`Koerier configuration is invalid: ${issues.join('; ')}`);
  return config;
}

/** Resource names, from the variables the CDK stack and the laptop host set per grant. */
export const resourceNames = {
  table: (name: TableName, env: Env = process.env) => requireEnv(resourceEnv.table(name), env),
  queueUrl: (name: QueueName, env: Env = process.env) => requireEnv(resourceEnv.queueUrl(name), env),
  deadLetterQueueUrl: (name: QueueName, env: Env = process.env) => requireEnv(resourceEnv.deadLetterQueueUrl(name), env),
  bucket: (name: BucketName, env: Env = process.env) => requireEnv(resourceEnv.bucket(name), env),
  key: (name: KeyName, env: Env = process.env) => requireEnv(resourceEnv.key(name), env),
};

function requireEnv(name: string, env: Env): string {
  const value = env[name]?.trim();
  if (!value) throw new ConfigError(`${name} is not set: the function was deployed without this resource grant`);
  return value;
}

/** Fails at start-up, not in every router batch, when the entitlements have the wrong shape. */
function checkedEntitlements(json: string, issues: string[]): string {
  try {
    parseEntitlements(json);
  } catch (error) {
    issues.push(`${settingEnv.entitlements}: ${(error as Error).message}`);
  }
  return json;
}

/** The access-token settings alone, for the laptop's development identity to issue matching tokens. */
export function accessTokenRules(env: Env = process.env): AccessTokenRules {
  const issues: string[] = [];
  const rules = readAccessTokenRules(env, issues);
  if (issues.length > 0) throw new ConfigError(`Koerier configuration is invalid: ${issues.join('; ')}`);
  return rules;
}

function readAccessTokenRules(env: Env, issues: string[]): AccessTokenRules {
  const defaults = DEFAULT_ACCESS_TOKEN_RULES;
  const typeRaw = env[settingEnv.accessTokenType]?.trim();
  const tokenType = typeRaw ? accessTokenTypeOf(typeRaw) : defaults.tokenType;
  if (tokenType === undefined) issues.push(`${settingEnv.accessTokenType} must be ${accessTokenTypes.join(' or ')}, got ${JSON.stringify(typeRaw)}`);

  let maxLifetimeSeconds = defaults.maxLifetimeSeconds;
  const lifetimeRaw = env[settingEnv.accessTokenMaxLifetimeSeconds]?.trim();
  if (lifetimeRaw) {
    const value = Number(lifetimeRaw);
    if (!Number.isInteger(value) || value < 60 || value > MAX_TOKEN_LIFETIME_LIMIT_SECONDS) {
      issues.push(`${settingEnv.accessTokenMaxLifetimeSeconds} must be an integer from 60 to ${MAX_TOKEN_LIFETIME_LIMIT_SECONDS}, got ${JSON.stringify(lifetimeRaw)}`);
    } else {
      maxLifetimeSeconds = value;
    }
  }

  const clientIdClaim = env[settingEnv.clientIdClaim]?.trim() || defaults.clientIdClaim;
  const claimProblem = clientIdClaimProblem(clientIdClaim);
  if (claimProblem) issues.push(`${settingEnv.clientIdClaim} ${claimProblem}, got ${JSON.stringify(clientIdClaim)}`);

  return { tokenType: tokenType ?? defaults.tokenType, maxLifetimeSeconds, clientIdClaim };
}

function readPublishGrants(raw: string | undefined, issues: string[]): PublishGrants {
  try {
    return parsePublishGrants(raw?.trim() || '{}');
  } catch (error) {
    issues.push(`${settingEnv.publishers}: ${(error as Error).message}`);
    return {};
  }
}

/** Default `oauth2-only`: the Edukoppeling profile wants OAuth2 client credentials towards every party. */
function readSinkCredentialPolicy(raw: string | undefined, issues: string[]): SinkCredentialPolicy {
  const value = raw?.trim() || 'oauth2-only';
  if (SINK_CREDENTIAL_POLICIES.includes(value as SinkCredentialPolicy)) return value as SinkCredentialPolicy;
  issues.push(`${settingEnv.sinkCredentials} must be ${SINK_CREDENTIAL_POLICIES.join(' or ')}, got ${JSON.stringify(raw)}`);
  return 'oauth2-only';
}

export const DEFAULT_OUTBOUND_PORTS: readonly number[] = [443];

/** Whole numbers 1–65535, at least one. */
export function parsePortList(raw: string): number[] | undefined {
  const items = list(raw);
  if (!items.every((item) => /^\d{1,5}$/.test(item))) return undefined;
  const ports = items.map(Number);
  if (ports.length === 0 || !ports.every((port) => port >= 1 && port <= 65_535)) return undefined;
  return [...new Set(ports)];
}

function readOutboundPorts(raw: string | undefined, issues: string[]): readonly number[] {
  if (!raw?.trim()) return DEFAULT_OUTBOUND_PORTS;
  const ports = parsePortList(raw);
  if (ports === undefined) issues.push(`${settingEnv.outboundPorts} must be a comma-separated list of ports from 1 to 65535, got ${JSON.stringify(raw)}`);
  return ports ?? DEFAULT_OUTBOUND_PORTS;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Push delivery settings (issue 5); the schedule and its defaults are documented in docs/OPERATIONS.md. */
export interface DeliverySettings {
  readonly retry: { readonly initialDelaySeconds: number; readonly maxDelaySeconds: number; readonly windowSeconds: number };
  readonly connectTimeoutMs: number;
  readonly responseTimeoutMs: number;
  readonly maxResponseBytes: number;
  readonly breaker: { readonly failureThreshold: number; readonly cooldownSeconds: number };
  readonly suspendAfterSeconds: number;
  readonly historySeconds: number;
  readonly deadLetterRetentionSeconds: number;
  readonly outboundCaFile?: string;
  /** Write CloudWatch Embedded Metric Format records (in Lambda only). */
  readonly emitMetrics: boolean;
}
