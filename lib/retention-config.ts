/**
 * How long the logs are kept (issue 31 item 4; docs/PRIVACY.md, "Retention"), read from the CDK
 * context with the rest of lib/stack-config.ts:
 *
 *   koerier:logRetentionDays   90 (default): days CloudWatch keeps every log group of the stack
 *                              (the functions', API Gateway's access log, the egress VPC's flow
 *                              log). Logs hold no event data (CE-16), but they name clients, event
 *                              ids and addresses; one of CloudWatch's own periods, 1 to 3653.
 *
 * The other stores' retention settings are the functions' (lib/runtime-settings.ts:
 * `koerier:archiveRetentionDays`, `koerier:deadLetterRetentionSeconds`,
 * `koerier:deliveryHistorySeconds`), enforced in the stack by lifecycle rules and TTL.
 */
import * as logs from 'aws-cdk-lib/aws-logs';

export const retentionContextKey = {
  logRetentionDays: 'koerier:logRetentionDays',
} as const;

export const DEFAULT_LOG_RETENTION_DAYS = 90;

/** The periods CloudWatch Logs accepts (RetentionInDays), in days. */
export const LOG_RETENTION_PERIODS: readonly number[] = Object.values(logs.RetentionDays)
  .filter((days): days is number => typeof days === 'number' && days !== logs.RetentionDays.INFINITE)
  .sort((a, b) => a - b);

/** Reads `koerier:logRetentionDays`; a bad value goes into `issues`, naming the key and the periods allowed. */
export function parseLogRetentionDays(context: Readonly<Record<string, unknown>>, issues: string[]): number {
  const raw = context[retentionContextKey.logRetentionDays];
  if (raw === undefined) return DEFAULT_LOG_RETENTION_DAYS;
  const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof value !== 'number' || !LOG_RETENTION_PERIODS.includes(value)) {
    issues.push(
      `${retentionContextKey.logRetentionDays} must be one of CloudWatch's periods in days (${LOG_RETENTION_PERIODS.join(', ')}), got ${JSON.stringify(raw)}`,
    );
    return DEFAULT_LOG_RETENTION_DAYS;
  }
  return value;
}
