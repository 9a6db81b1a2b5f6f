/**
 * Per-client quotas (issue 28, item 13): what one client may hold of the resources that cost the
 * deployment something whatever the publish rate — pull subscriptions (two SQS queues each),
 * replays running at once (each scans the archive), and bytes of presigned uploads per hour (each
 * up to 2 GiB in the payloads bucket for the claim check's retention, 45 days by default). The deployment sets the defaults
 * (KOERIER_QUOTA_*, `koerier:quota*` in the CDK context); an admin raises or lowers them for one
 * partner in the partner directory (`quotas` of PUT /clients/{clientId}).
 *
 * A count quota refused is a 409 (the client holds as much as it may: free some), a rate quota a
 * 429 with `Retry-After` (its window ends then); an upload larger than the whole hourly quota can
 * never pass and is a 413. Each names the quota, its limit and how to get it raised.
 */
import { API_BASE_PATH } from '../http/api-version.js';
import { KoerierError, problem } from '../http/problems.js';

export const QUOTA_NAMES = ['maxPullSubscriptions', 'maxConcurrentReplays', 'uploadBytesPerHour'] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];

export type QuotaLimits = Readonly<Record<QuotaName, number>>;
/** A partner's own limits; a quota it does not name is the deployment's default. */
export type QuotaOverrides = Readonly<Partial<Record<QuotaName, number>>>;

const GIB = 1024 ** 3;

/**
 * The defaults (docs/OPERATIONS.md, "Per-client quotas"): 20 pull subscriptions is one per
 * application or feed of a large partner with room to spare, while 40 queues per client stay far
 * from anything SQS or a bill notices; two replays at once let a partner recover two
 * subscriptions side by side without one partner's scans taking the replay worker; 10 GiB an hour
 * is five of the largest uploads (2 GiB) an hour, or a 64 KiB-plus event every 25 ms.
 */
export const DEFAULT_QUOTAS: QuotaLimits = {
  maxPullSubscriptions: 20,
  maxConcurrentReplays: 2,
  uploadBytesPerHour: 10 * GIB,
};

/** What a quota may be set to, by the deployment or for a partner: 0 refuses the resource outright. */
export const QUOTA_BOUNDS: Readonly<Record<QuotaName, { readonly min: number; readonly max: number }>> = {
  maxPullSubscriptions: { min: 0, max: 1000 },
  maxConcurrentReplays: { min: 0, max: 100 },
  // 1 PiB: far above any sensible figure, and an exact integer in a JSON number and a DynamoDB N.
  uploadBytesPerHour: { min: 0, max: 1024 ** 5 },
};

/** The deployment default of a quota as the problem answers and the settings state it (bytes also in GiB). */
export function quotaDefaultText(name: QuotaName): string {
  const value = DEFAULT_QUOTAS[name];
  return name === 'uploadBytesPerHour' ? `${value} (${value / GIB} GiB)` : String(value);
}

export const UPLOAD_QUOTA_WINDOW_MS = 3_600_000;

/** The limits that hold for `clientId`: its partner's overrides over the deployment's defaults. */
export function quotasOf(
  clientId: string,
  defaults: QuotaLimits,
  overrides: ReadonlyMap<string, QuotaOverrides>,
): QuotaLimits {
  return { ...defaults, ...(overrides.get(clientId) ?? {}) };
}

const UNITS: Readonly<Record<QuotaName, string>> = {
  maxPullSubscriptions: 'pull subscriptions',
  maxConcurrentReplays: 'replays running at once',
  uploadBytesPerHour: 'bytes of uploads an hour',
};

function howToRaise(clientId: string, quota: QuotaName): string {
  return `To have it raised, ask the gateway's operators: an admin sets quotas.${quota} of this client with PUT ${API_BASE_PATH}/clients/${encodeURIComponent(clientId)}.`;
}

/** The 409 of a count quota: `used` of `limit` are held. */
export function countQuotaExceeded(
  clientId: string,
  quota: Exclude<QuotaName, 'uploadBytesPerHour'>,
  limit: number,
  used: number,
  free: string,
): KoerierError {
  return new KoerierError(
    problem(
      409,
      'quota-exceeded',
      `Client "${clientId}" holds ${used} ${UNITS[quota]}, its quota ${quota} is ${limit}. ${free} ${howToRaise(clientId, quota)}`,
      { quota, limit, used },
    ),
  );
}

/** The 429 of the upload quota, until its window ends; the 413 when `requested` alone exceeds the limit. */
export function uploadQuotaExceeded(
  clientId: string,
  limit: number,
  used: number,
  requested: number,
  retryAfterSeconds: number,
): KoerierError {
  const quota: QuotaName = 'uploadBytesPerHour';
  if (requested > limit) {
    return new KoerierError(
      problem(
        413,
        'quota-exceeded',
        `An upload of ${requested} bytes is more than the quota ${quota} of client "${clientId}" (${limit}). ${howToRaise(clientId, quota)}`,
        {
          quota,
          limit,
          requested,
        },
      ),
    );
  }
  return new KoerierError(
    problem(
      429,
      'quota-exceeded',
      `Client "${clientId}" was granted uploads of ${used} bytes this hour; ${requested} more would pass its quota ${quota} of ${limit}. Retry after Retry-After, when the hour ends. ${howToRaise(clientId, quota)}`,
      { quota, limit, used, requested },
    ),
    { headers: { 'retry-after': String(retryAfterSeconds) } },
  );
}
