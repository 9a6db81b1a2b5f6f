/**
 * The functions' tunable figures settable as CDK context (issue 12, item 1): one row per setting,
 * naming its context key, the function setting it fills, its default and its bounds. The bounds
 * are those functions/config.ts accepts, or narrower where the stack knows more (a retry window
 * longer than SQS keeps a message would lose deliveries unseen). test/unit/runtime-settings.test.ts
 * checks every row against loadConfig, and docs/DEPLOYING.md's settings table against these rows.
 */
import {
  DEFAULT_ARCHIVE_RETENTION_DAYS,
  MAX_ARCHIVE_RETENTION_DAYS,
  MAX_IDEMPOTENCY_TTL_SECONDS,
  settingEnv,
  type KoerierConfig,
} from '../functions/config.js';
import { DEFAULT_QUOTAS, QUOTA_BOUNDS } from '../functions/core/quotas/client-quotas.js';
import { SETTLING_WINDOW_MS } from '../functions/core/delivery-message/ordered-outbox.js';

export interface RuntimeSetting {
  readonly contextKey: `koerier:${string}`;
  /** The function setting (functions/config/setting-names.ts) it fills. */
  readonly env: string;
  /** Undefined: unset unless given (the functions then leave the feature off). */
  readonly default: number | undefined;
  readonly min: number;
  readonly max: number;
  readonly meaning: string;
  /** Where loadConfig puts it, for the test that keeps the two in step. */
  readonly read: (config: KoerierConfig) => number | undefined;
}

const DAY = 24 * 3600;

export const runtimeSettings: readonly RuntimeSetting[] = [
  {
    contextKey: 'koerier:deliveryRetryInitialSeconds',
    env: settingEnv.deliveryRetryInitialSeconds,
    default: 30,
    min: 1,
    max: 43_200,
    meaning:
      'delay after the first failed attempt; each later one doubles (±20% jitter) up to the longest single delay',
    read: (c) => c.delivery.retry.initialDelaySeconds,
  },
  {
    contextKey: 'koerier:deliveryRetryMaxDelaySeconds',
    env: settingEnv.deliveryRetryMaxDelaySeconds,
    default: 4 * 3600,
    min: 1,
    max: 43_200,
    meaning: 'the longest single delay between two attempts (SQS allows at most 12 hours)',
    read: (c) => c.delivery.retry.maxDelaySeconds,
  },
  {
    contextKey: 'koerier:deliveryRetryWindowSeconds',
    env: settingEnv.deliveryRetryWindowSeconds,
    default: DAY,
    min: 60,
    // SQS keeps a delivery message 14 days; a longer window would let it vanish while still retrying.
    max: MAX_IDEMPOTENCY_TTL_SECONDS,
    meaning:
      "how long a delivery is retried before it becomes a dead letter, never past its Idempotency-Key's lifetime",
    read: (c) => c.delivery.retry.windowSeconds,
  },
  {
    contextKey: 'koerier:deliveryBreakerFailures',
    env: settingEnv.deliveryBreakerFailures,
    default: 5,
    min: 1,
    max: 1000,
    meaning: "consecutive failures that open a subscription's circuit breaker",
    read: (c) => c.delivery.breaker.failureThreshold,
  },
  {
    contextKey: 'koerier:deliveryBreakerCooldownSeconds',
    env: settingEnv.deliveryBreakerCooldownSeconds,
    default: 60,
    min: 1,
    max: 3600,
    meaning: 'the first cool-down of an open breaker before one trial delivery',
    read: (c) => c.delivery.breaker.cooldownSeconds,
  },
  {
    contextKey: 'koerier:deliverySuspendAfterSeconds',
    env: settingEnv.deliverySuspendAfterSeconds,
    default: 5 * DAY,
    min: 60,
    max: 365 * DAY,
    meaning: 'a target failing this long without one success is suspended',
    read: (c) => c.delivery.suspendAfterSeconds,
  },
  {
    contextKey: 'koerier:deliveryHistorySeconds',
    env: settingEnv.deliveryHistorySeconds,
    default: 7 * DAY,
    min: 60,
    max: 365 * DAY,
    meaning: "how long a delivery's attempt history is kept",
    read: (c) => c.delivery.historySeconds,
  },
  {
    contextKey: 'koerier:deadLetterRetentionSeconds',
    env: settingEnv.deadLetterRetentionSeconds,
    default: 30 * DAY,
    min: 60,
    max: 365 * DAY,
    meaning: 'how long dead letters are kept for inspection and redrive',
    read: (c) => c.delivery.deadLetterRetentionSeconds,
  },
  {
    contextKey: 'koerier:validationTimeoutSeconds',
    env: settingEnv.validationTimeoutSeconds,
    default: 5,
    min: 1,
    max: 20,
    meaning: "how long Koerier waits for a target's answer to the validation request (WH-4)",
    read: (c) => c.handshake.timeoutSeconds,
  },
  {
    contextKey: 'koerier:validationWindowSeconds',
    env: settingEnv.validationWindowSeconds,
    default: DAY,
    min: 60,
    max: 30 * DAY,
    meaning: 'how long a target has to approve through the validation callback before the subscription is rejected',
    read: (c) => c.handshake.windowSeconds,
  },
  {
    contextKey: 'koerier:webhookRequestRate',
    env: settingEnv.webhookRequestRate,
    default: undefined,
    min: 1,
    max: 1_000_000,
    meaning: 'requests per minute Koerier asks each target for in `WebHook-Request-Rate`; unset: not asked',
    read: (c) => c.handshake.requestRatePerMinute,
  },
  {
    contextKey: 'koerier:idempotencyLockSeconds',
    env: settingEnv.idempotencyLockSeconds,
    default: 60,
    min: 31,
    max: 3600,
    meaning:
      'how long an idempotency key stays locked by a request still running; also how long a repeat of an accepted publish that reaches another function instance waits (409 with `Retry-After`) before it is replayed',
    read: (c) => c.idempotency.lockSeconds,
  },
  {
    contextKey: 'koerier:archiveRetentionDays',
    env: settingEnv.archiveRetentionDays,
    default: DEFAULT_ARCHIVE_RETENTION_DAYS,
    min: 1,
    max: MAX_ARCHIVE_RETENTION_DAYS,
    meaning:
      "days the event archive keeps every routed event: the archive bucket's lifecycle rule, and the oldest a replay reaches (docs/REPLAY.md). The claim check keeps large events' data this long plus 15 days (45 by default), so a replayed event's `dataref` still answers: raising it raises that storage too",
    read: (c) => c.archive.retentionDays,
  },
  // Per-client quotas (issue 28 item 13): the defaults; the admin API sets a partner's own (docs/OPERATIONS.md, "Per-client quotas").
  {
    contextKey: 'koerier:quotaMaxPullSubscriptions',
    env: settingEnv.quotaMaxPullSubscriptions,
    default: DEFAULT_QUOTAS.maxPullSubscriptions,
    ...QUOTA_BOUNDS.maxPullSubscriptions,
    meaning:
      "pull subscriptions (two SQS queues each) one client may hold; the next is refused with 409 `quota-exceeded`; a partner's own `quotas` in the partner directory win ([OPERATIONS.md](OPERATIONS.md#per-client-quotas))",
    read: (c) => c.quotas.maxPullSubscriptions,
  },
  {
    contextKey: 'koerier:quotaMaxConcurrentReplays',
    env: settingEnv.quotaMaxConcurrentReplays,
    default: DEFAULT_QUOTAS.maxConcurrentReplays,
    ...QUOTA_BOUNDS.maxConcurrentReplays,
    meaning:
      "replays running at once on one client's subscriptions (each scans the archive); the next is refused with 409 `quota-exceeded`; a partner's own `quotas` win",
    read: (c) => c.quotas.maxConcurrentReplays,
  },
  {
    contextKey: 'koerier:quotaUploadBytesPerHour',
    env: settingEnv.quotaUploadBytesPerHour,
    default: DEFAULT_QUOTAS.uploadBytesPerHour,
    ...QUOTA_BOUNDS.uploadBytesPerHour,
    meaning:
      "bytes of presigned uploads (`POST /payloads`, 10 GiB) one client is granted per clock hour; past it 429 `quota-exceeded` with `Retry-After` (413 for one upload larger than the whole quota); a partner's own `quotas` win",
    read: (c) => c.quotas.uploadBytesPerHour,
  },
  {
    contextKey: 'koerier:zgwMaxTokenAgeSeconds',
    env: settingEnv.zgwMaxTokenAgeSeconds,
    default: 3600,
    min: 60,
    max: 24 * 3600,
    meaning:
      "the ZGW Notificaties API under `/zgw/api/v1` (docs/ZGW.md): seconds after its `iat` a client's HS256 token is refused with 403 `jwt-expired`",
    read: (c) => c.zgw.maxTokenAgeSeconds,
  },
  {
    contextKey: 'koerier:orderingSettlingMs',
    env: settingEnv.orderingSettlingMs,
    default: SETTLING_WINDOW_MS,
    min: 0,
    max: 60_000,
    meaning:
      'ordered subscriptions (docs/ORDERING.md, "Acceptance order"): milliseconds after its acceptance an event of a key is numbered in its lane; an earlier event of the key that reaches the router later than this is delivered after it, logged as `ordered event appended out of acceptance order`. Longer: rarer, and that much more latency for every ordered event',
    read: (c) => c.orderingSettlingMs,
  },
];

/**
 * Reads each setting present in `context` (a number, or its text from `-c`), pushing one message
 * per bad value onto `issues`; returns the function settings to set. Absent settings are left to
 * the functions' own defaults, which are the ones in the rows above.
 */
export function parseRuntimeSettings(
  context: Readonly<Record<string, unknown>>,
  issues: string[],
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const setting of runtimeSettings) {
    const raw = context[setting.contextKey];
    if (raw === undefined) continue;
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < setting.min || value > setting.max) {
      issues.push(
        `${setting.contextKey} must be a whole number from ${setting.min} to ${setting.max}, e.g. -c ${setting.contextKey}=${setting.default ?? setting.min}, got ${JSON.stringify(raw)}`,
      );
      continue;
    }
    environment[setting.env] = String(value);
  }
  return environment;
}
