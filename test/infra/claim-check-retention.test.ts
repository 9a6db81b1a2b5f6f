/**
 * Issue 36, item 8: replays reach back as far as the archive keeps events (`koerier:archiveRetentionDays`,
 * 30 days by default), and a replayed large event carries the `dataref` of its claim-check object,
 * so the object must outlive the archive's reach by what a delivery needs of it (NL GOV §3.4.7).
 * One setting derives both the bucket's lifecycle rule (the stack) and each object's expiry in
 * the payload ledger (the functions, from their environment), through `claimCheckRetentionSeconds`.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, settingEnv, type Env } from '../../functions/config.js';
import { checkClaimCheckOutlivesReplays, withArchiveRetention } from '../../lib/koerier-stack.js';
import {
  buckets,
  CLAIM_CHECK_LIVE_SECONDS,
  claimCheckRetentionSeconds,
  queues,
  tables,
} from '../../functions/config/resources.js';
import { logicalId, synthKoerier, type Synthesised } from './synth.js';

const DAY = 86400;

function expirationDays(synth: Synthesised, bucket: 'payloads' | 'archive'): number[] {
  const resource = synth.resources[logicalId(synth.stack, synth.stack.buckets.byName.get(bucket)!)]!;
  const rules = resource.Properties.LifecycleConfiguration.Rules as { ExpirationInDays?: number; Status: string }[];
  return rules
    .filter((rule) => rule.Status === 'Enabled' && rule.ExpirationInDays !== undefined)
    .map((rule) => rule.ExpirationInDays!);
}

/** A function's environment from the template; values CloudFormation fills in stand as text. */
function environmentOf(synth: Synthesised, name: string): Env {
  const variables = synth.resources[logicalId(synth.stack, synth.stack.functions.get(name)!.function)]!.Properties
    .Environment.Variables as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(variables).map(([key, value]) => [
      key,
      typeof value === 'string'
        ? value
        : // The API's URL is checked as a URL at start-up (issue 31 item 1): its stand-in must be one.
          key === settingEnv.publicBaseUrl
          ? 'https://filled-in-by-cloudformation.invalid/v1'
          : 'filled-in-by-cloudformation',
    ]),
  );
}

describe('claim-check lifetime and replays (issue 36, item 8)', () => {
  it("CARD-6, EDU-1, EDU-18, issue 36 item 8: by default the payloads bucket keeps objects 45 days, the archive's 30 days of replays plus a day past the longest queue retention", () => {
    const longestQueueSeconds = Math.max(...Object.values(queues).map((queue) => queue.retentionSeconds));
    expect(CLAIM_CHECK_LIVE_SECONDS).toBe(longestQueueSeconds + DAY);
    expect(buckets.payloads.objectRetentionSeconds).toBe(
      buckets.archive.objectRetentionSeconds + CLAIM_CHECK_LIVE_SECONDS,
    );
    const synth = synthKoerier();
    expect(expirationDays(synth, 'archive')).toEqual([30]);
    expect(expirationDays(synth, 'payloads')).toEqual([45]);
    // The ledger records live in the idempotency table, which DynamoDB's TTL sweeps by `expiresAt`;
    // each record is set to outlive its object (functions/aws/dynamodb-payload-ledger.ts).
    const idempotency = synth.resources[logicalId(synth.stack, synth.stack.tables.byName.get('idempotency')!.table)]!;
    expect(idempotency.Properties.TimeToLiveSpecification).toEqual({
      AttributeName: tables.idempotency.ttlAttribute,
      Enabled: true,
    });
  });

  it('CARD-6, EDU-1, EDU-18, issue 36 item 8: with koerier:archiveRetentionDays 90 the bucket keeps objects 105 days, and the ingest and payloads functions derive the same lifetime from their environment', () => {
    const synth = synthKoerier({ context: { 'koerier:archiveRetentionDays': 90 } });
    expect(expirationDays(synth, 'archive')).toEqual([90]);
    const [payloadDays] = expirationDays(synth, 'payloads');
    expect(payloadDays).toBe(105);
    // The functions that write objects and their ledger records (`objectExpiresAt`).
    for (const name of ['ingest', 'payloads']) {
      const env = environmentOf(synth, name);
      expect(env[settingEnv.archiveRetentionDays], name).toBe('90');
      expect(claimCheckRetentionSeconds(loadConfig(env).archive.retentionDays), name).toBe(payloadDays! * DAY);
    }
  });

  it('EDU-1, issue 36 item 8: for every archive retention the derived claim-check lifetime passes the synth check; a shorter one stops the synth', () => {
    for (const days of [1, 7, 30, 365, 3650]) {
      expect(claimCheckRetentionSeconds(days)).toBe(days * DAY + CLAIM_CHECK_LIVE_SECONDS);
      const config = { runtimeSettings: { [settingEnv.archiveRetentionDays]: String(days) } } as unknown as Parameters<
        typeof withArchiveRetention
      >[1];
      // Whatever the description says, the stack derives the claim check's lifetime from the setting.
      const specs = withArchiveRetention({ payloads: { objectRetentionSeconds: 15 * DAY }, archive: {} }, config);
      expect(specs['payloads']?.objectRetentionSeconds).toBe(claimCheckRetentionSeconds(days));
    }
    const archive = { objectRetentionSeconds: 30 * DAY };
    expect(() => checkClaimCheckOutlivesReplays({ archive, payloads: { objectRetentionSeconds: 15 * DAY } })).toThrow(
      /claim check keeps objects 15 days, but replays reach back 30 days .* dataref would answer 410/,
    );
    expect(() =>
      checkClaimCheckOutlivesReplays({
        archive,
        payloads: { objectRetentionSeconds: 30 * DAY + CLAIM_CHECK_LIVE_SECONDS - 1 },
      }),
    ).toThrow(/410/);
    expect(() =>
      checkClaimCheckOutlivesReplays({
        archive,
        payloads: { objectRetentionSeconds: 30 * DAY + CLAIM_CHECK_LIVE_SECONDS },
      }),
    ).not.toThrow();
    // Kept for good: nothing to check.
    expect(() => checkClaimCheckOutlivesReplays({ archive, payloads: {} })).not.toThrow();
  });
});
