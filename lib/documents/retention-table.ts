/**
 * The retention table of docs/PRIVACY.md (issue 31 items 4 and 5): every place Koerier keeps
 * something about an event, what it holds, how long by default, the setting that changes it and
 * what in the stack enforces it. The figures are the code's own constants and defaults, so
 * `npm run docs:generate` writes the table and test/infra/retention.test.ts fails when the file
 * holds another, or when the synthesized template enforces another figure than the table states.
 */
import {
  DEFAULT_ARCHIVE_RETENTION_DAYS,
  claimCheckRetentionSeconds,
  queues,
} from '../../functions/config/resources.js';
import { RECORD_OUTLIVES_OBJECT_SECONDS } from '../../functions/aws/dynamodb-payload-ledger.js';
import { KEEP_SECONDS as REPLAY_RECORD_SECONDS } from '../../functions/aws/dynamodb-replay-store.js';
import { PULL_LIMITS } from '../../functions/core/subscriptions/subscription.js';
import { ACCESS_LOG_RETENTION_DAYS } from '../constructs/buckets.js';
import { DEFAULT_LOG_RETENTION_DAYS } from '../retention-config.js';
import { runtimeSettings } from '../runtime-settings.js';
import { DEFAULT_IDEMPOTENCY_TTL_DAYS } from '../stack-config.js';
import { DEAD_LETTER_RETENTION } from '../constructs/queues.js';

export interface RetentionRow {
  readonly store: string;
  readonly holds: string;
  /** The default, in days. */
  readonly days: number | 'kept' | 'until handled';
  readonly limit?: string;
  readonly setting: string;
  readonly enforcedBy: string;
}

const DAY = 24 * 3600;
const runtimeDefault = (key: string): number => {
  const value = runtimeSettings.find((setting) => setting.contextKey === key)?.default;
  if (value === undefined) throw new Error(`${key} has no default`);
  return value;
};

export function retentionRows(): RetentionRow[] {
  const claimCheckDays = claimCheckRetentionSeconds(DEFAULT_ARCHIVE_RETENTION_DAYS) / DAY;
  const queueDays = Math.max(...Object.values(queues).map((queue) => queue.retentionSeconds)) / DAY;
  return [
    {
      store: 'Event archive (S3 bucket `archive`)',
      holds: 'every routed event with its data inline (data above 64 KiB by reference)',
      days: DEFAULT_ARCHIVE_RETENTION_DAYS,
      setting: '`koerier:archiveRetentionDays`',
      enforcedBy: 'S3 lifecycle rule (expiration); replays skip older events',
    },
    {
      store: 'Claim check (S3 bucket `payloads`)',
      holds: 'the data of events above the inline threshold, and uploads',
      days: claimCheckDays,
      setting: '`koerier:archiveRetentionDays` + 15 days',
      enforcedBy: 'S3 lifecycle rule (expiration); a fetch answers 410 after it',
    },
    {
      store: 'Payload ledger (DynamoDB `idempotency`)',
      holds: "who may fetch each object: the event's `source`, `id` and publisher, no data",
      days: claimCheckDays + RECORD_OUTLIVES_OBJECT_SECONDS / DAY,
      setting: 'follows the claim check',
      enforcedBy: 'DynamoDB TTL (`expiresAt`)',
    },
    {
      store: 'Queues in transit (SQS `inbound`, `deliveries`, `replays`) and their dead-letter queues',
      holds: 'events until routed or delivered',
      days: 'until handled',
      limit: `at most ${queueDays} days (${DEAD_LETTER_RETENTION.toDays()} days in a dead-letter queue)`,
      setting: 'fixed; a push delivery is retried for `koerier:deliveryRetryWindowSeconds` (1 day)',
      enforcedBy: 'SQS message retention',
    },
    {
      store: 'Pull subscription queues (SQS `<stack>-pull-<id>`)',
      holds: 'events until the subscriber acknowledges them',
      days: PULL_LIMITS.retentionSeconds.default / DAY,
      limit: `at most ${PULL_LIMITS.retentionSeconds.max / DAY} days`,
      setting: "the subscription's `retentionseconds`",
      enforcedBy: 'SQS message retention',
    },
    {
      store: 'Dead letters (DynamoDB `deliveries`)',
      holds: "the events of deliveries Koerier stopped trying, with the receiver's last answer (2 KiB excerpt)",
      days: runtimeDefault('koerier:deadLetterRetentionSeconds') / DAY,
      setting: '`koerier:deadLetterRetentionSeconds`',
      enforcedBy: 'DynamoDB TTL (`expiresAt`)',
    },
    {
      store: 'Attempt history (DynamoDB `deliveries`)',
      holds: "events by `source`, `id` and `type` (no data), status, latency, the receiver's answer (2 KiB excerpt)",
      days: runtimeDefault('koerier:deliveryHistorySeconds') / DAY,
      setting: '`koerier:deliveryHistorySeconds`',
      enforcedBy: 'DynamoDB TTL (`expiresAt`)',
    },
    {
      store: 'Delivery progress (DynamoDB `deliveries`)',
      holds: "a failing delivery's last attempts with the newest answer excerpt, no events",
      days: DEFAULT_IDEMPOTENCY_TTL_DAYS,
      setting: '`koerier:idempotencyTtlDays`',
      enforcedBy: 'DynamoDB TTL (`expiresAt`)',
    },
    {
      store: 'Idempotency keys and routed-event markers (DynamoDB `idempotency`)',
      holds:
        'stored answers (accepted `source` + `id` pairs), the publisher and correlation id of each routed event, no data',
      days: DEFAULT_IDEMPOTENCY_TTL_DAYS,
      setting: '`koerier:idempotencyTtlDays`',
      enforcedBy: 'DynamoDB TTL (`expiresAt`)',
    },
    {
      store: 'Replay records (DynamoDB `deliveries`)',
      holds: 'who replayed which window to which subscription, no events',
      days: REPLAY_RECORD_SECONDS / DAY,
      setting: 'fixed',
      enforcedBy: 'DynamoDB TTL (`expiresAt`)',
    },
    {
      store: 'Erasure audit records (DynamoDB `deliveries`)',
      holds: 'who erased when, the selector as a keyed hash, counts; no personal data',
      days: 'kept',
      setting: 'fixed',
      enforcedBy: '— (the proof of an erasure)',
    },
    {
      store: 'Erasure requests in transit (SQS `erasures`)',
      holds: 'the selector (a subject, event ids or a data value) while the erasure runs',
      days: 'until handled',
      limit: `at most ${queues.erasures.retentionSeconds / DAY} days (${DEAD_LETTER_RETENTION.toDays()} days in its dead-letter queue)`,
      setting: 'fixed',
      enforcedBy: 'SQS message retention',
    },
    {
      store: 'Logs (CloudWatch Logs: functions, API access log, egress flow log)',
      holds: 'client ids, event `source`/`id`/`type`, addresses and status codes; never event data (CE-16)',
      days: DEFAULT_LOG_RETENTION_DAYS,
      setting: '`koerier:logRetentionDays`',
      enforcedBy: 'log group retention',
    },
    {
      store: 'S3 server access logs (bucket `AccessLogs`)',
      holds: 'who read or wrote which object (object keys are payload ids, not data)',
      days: ACCESS_LOG_RETENTION_DAYS,
      setting: 'fixed',
      enforcedBy: 'S3 lifecycle rule (expiration)',
    },
  ];
}

export function renderRetentionTable(rows: readonly RetentionRow[] = retentionRows()): string {
  const days = (row: RetentionRow) =>
    `${typeof row.days === 'number' ? `${row.days} days` : row.days}${row.limit ? `, ${row.limit}` : ''}`;
  const lines = [
    '| where | what it holds | kept (default) | setting | enforced by |',
    '|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.store} | ${row.holds} | ${days(row)} | ${row.setting} | ${row.enforcedBy} |`),
  ];
  return `${lines.join('\n')}\n`;
}
