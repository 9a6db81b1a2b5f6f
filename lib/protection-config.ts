/**
 * The settings that protect the API edge (review #20, docs/OPERATIONS.md "Protecting the edge"),
 * read from the CDK context with the rest of lib/stack-config.ts:
 *
 *   koerier:publishRatePerMinute       requests per minute per publisher (the DynamoDB window; 6000)
 *   koerier:manageRatePerMinute        per-client requests per minute on the management routes, per container (600)
 *   koerier:ingestReservedConcurrency  concurrent ingest invocations reserved, and allowed at most (50), or "none"
 *   koerier:pullReservedConcurrency    concurrent pull invocations (long polls) reserved, and allowed at most (20), or "none"
 *   koerier:routeThrottling            API Gateway limits per function's routes, {"ingest": {"rateLimit": 300, "burstLimit": 600}, ...}
 *   koerier:edgeProtection             "none" (default) or "cloudfront-waf"
 *   koerier:edgeWebAclArn              with cloudfront-waf: an existing CLOUDFRONT web ACL to use instead of creating one
 *   koerier:edgeRateLimits             with cloudfront-waf: WAF rate rules, requests per 5 minutes, {"perIp": 30000, "perAuthorization": 30000}
 */
import { functions } from '../functions/config/resources.js';
import { readJsonSetting } from './json-setting.js';

export interface RouteThrottle {
  /** Steady requests per second. */
  readonly rateLimit: number;
  /** Requests API Gateway lets through at once above the steady rate. */
  readonly burstLimit: number;
}

export type EdgeProtection =
  | { readonly mode: 'none' }
  | {
      readonly mode: 'cloudfront-waf';
      /** An existing web ACL (scope CLOUDFRONT, so in us-east-1); absent: Koerier creates one in a us-east-1 stack. */
      readonly webAclArn?: string;
      readonly rateLimitPerIp: number;
      readonly rateLimitPerAuthorization: number;
    };

export interface ProtectionConfig {
  readonly publishRatePerMinute?: number;
  readonly manageRatePerMinute?: number;
  /** `none`: the ingest draws on the account's unreserved pool like the other functions. */
  readonly ingestReservedConcurrency: number | 'none';
  /** `none`: the pull function (its long polls) draws on the unreserved pool. */
  readonly pullReservedConcurrency: number | 'none';
  /** Per function of functions/config/resources.ts with routes: the API Gateway throttle of each of its routes. */
  readonly routeThrottling: Readonly<Record<string, RouteThrottle>>;
  readonly edge: EdgeProtection;
}

export const protectionContextKey = {
  publishRatePerMinute: 'koerier:publishRatePerMinute',
  manageRatePerMinute: 'koerier:manageRatePerMinute',
  ingestReservedConcurrency: 'koerier:ingestReservedConcurrency',
  pullReservedConcurrency: 'koerier:pullReservedConcurrency',
  routeThrottling: 'koerier:routeThrottling',
  edgeProtection: 'koerier:edgeProtection',
  edgeWebAclArn: 'koerier:edgeWebAclArn',
  edgeRateLimits: 'koerier:edgeRateLimits',
} as const;

/**
 * 50 concurrent ingest invocations: at the ~100 ms an accepted request takes in AWS that is about
 * 500 requests per second, the stage's own ceiling (lib/constructs/http-api.ts STAGE_THROTTLE),
 * while the other 950 of a default account's 1000 stay for the router, the deliveries and
 * everything else in the account.
 */
export const DEFAULT_INGEST_RESERVED_CONCURRENCY = 50;

/**
 * 20 concurrent pull invocations: a long poll holds its invocation for up to 20 s, so this is 20
 * consumers waiting at once, and it also caps them, so consumers polling in a loop can never take
 * the concurrency the ingest, router and deliveries need (docs/PULL.md, "Capacity").
 */
export const DEFAULT_PULL_RESERVED_CONCURRENCY = 20;

/**
 * Per function, requests per second API Gateway lets through before answering 429 itself. The
 * ingest's is below what its reserved concurrency serves, so a flood meets API Gateway's 429
 * rather than Lambda throttling (which API Gateway answers with a 5xx). The management routes are
 * low-volume by nature.
 */
export const DEFAULT_ROUTE_THROTTLING: Readonly<Record<string, RouteThrottle>> = {
  ingest: { rateLimit: 300, burstLimit: 600 },
  subscriptions: { rateLimit: 50, burstLimit: 100 },
  deliveryAdmin: { rateLimit: 20, burstLimit: 40 },
  // Subscribers fetch the data of large events, one request each; uploads are rarer still.
  payloads: { rateLimit: 100, burstLimit: 200 },
};

/** Five minutes of the default publish rate (6000 a minute): the edge only stops floods. */
export const DEFAULT_EDGE_RATE_LIMITS = { perIp: 30_000, perAuthorization: 30_000 } as const;

/** WAF rate-based rules take 10 to 2,000,000,000 requests per evaluation window. */
const WAF_RATE_LIMIT = { min: 10, max: 2_000_000_000 } as const;
const WEB_ACL_ARN = /^arn:aws[a-z-]*:wafv2:us-east-1:\d{12}:global\/webacl\/[\w-]+\/[\w-]+$/;

/** Validates the protection settings, pushing one message per problem (each naming its key) onto `issues`. */
export function parseProtectionConfig(context: Readonly<Record<string, unknown>>, issues: string[]): ProtectionConfig {
  const key = protectionContextKey;
  const problem = (name: string, what: string, value: unknown) =>
    issues.push(`${name} ${what}, got ${value === undefined ? 'nothing' : JSON.stringify(value)}`);
  const integer = (name: string, raw: unknown, min: number, max: number): number | undefined => {
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
    problem(name, `must be a whole number from ${min} to ${max}`, raw);
    return undefined;
  };
  const optionalInteger = (name: string, min: number, max: number) =>
    context[name] === undefined ? undefined : integer(name, context[name], min, max);

  const publishRatePerMinute = optionalInteger(key.publishRatePerMinute, 1, 1_000_000);
  const manageRatePerMinute = optionalInteger(key.manageRatePerMinute, 1, 1_000_000);

  let ingestReservedConcurrency: number | 'none' = DEFAULT_INGEST_RESERVED_CONCURRENCY;
  const reservedRaw = context[key.ingestReservedConcurrency];
  if (reservedRaw === 'none') ingestReservedConcurrency = 'none';
  else if (reservedRaw !== undefined) {
    // 0 would stop the ingest altogether; Lambda keeps at least 100 unreserved per account anyway.
    const reserved = integer(`${key.ingestReservedConcurrency} (or "none")`, reservedRaw, 1, 10_000);
    if (reserved !== undefined) ingestReservedConcurrency = reserved;
  }

  let pullReservedConcurrency: number | 'none' = DEFAULT_PULL_RESERVED_CONCURRENCY;
  const pullReservedRaw = context[key.pullReservedConcurrency];
  if (pullReservedRaw === 'none') pullReservedConcurrency = 'none';
  else if (pullReservedRaw !== undefined) {
    const reserved = integer(`${key.pullReservedConcurrency} (or "none")`, pullReservedRaw, 1, 10_000);
    if (reserved !== undefined) pullReservedConcurrency = reserved;
  }

  const routeThrottling: Record<string, RouteThrottle> = { ...DEFAULT_ROUTE_THROTTLING };
  const throttlingRaw = jsonValue(
    key.routeThrottling,
    context[key.routeThrottling],
    issues,
    '{"ingest": {"rateLimit": 300, "burstLimit": 600}}',
  );
  if (throttlingRaw !== undefined && throttlingRaw !== INVALID_JSON) {
    const routed = Object.entries(functions)
      .filter(([, spec]) => 'routes' in spec)
      .map(([name]) => name);
    if (typeof throttlingRaw !== 'object' || throttlingRaw === null || Array.isArray(throttlingRaw)) {
      problem(
        key.routeThrottling,
        'must be an object {"<function>": {"rateLimit": <per second>, "burstLimit": <requests>}}',
        context[key.routeThrottling],
      );
    } else {
      for (const [name, limits] of Object.entries(throttlingRaw)) {
        const where = `${key.routeThrottling}.${name}`;
        if (!routed.includes(name)) {
          issues.push(`${where} names no function with routes (known: ${routed.join(', ')})`);
          continue;
        }
        const { rateLimit, burstLimit } = (typeof limits === 'object' && limits !== null ? limits : {}) as Record<
          string,
          unknown
        >;
        const rate = integer(`${where}.rateLimit`, rateLimit, 1, 10_000);
        const burst = integer(`${where}.burstLimit`, burstLimit, 1, 5_000);
        if (rate !== undefined && burst !== undefined) routeThrottling[name] = { rateLimit: rate, burstLimit: burst };
      }
    }
  }

  let edge: EdgeProtection = { mode: 'none' };
  const mode = context[key.edgeProtection] ?? 'none';
  if (mode === 'cloudfront-waf') {
    const arn = context[key.edgeWebAclArn];
    if (arn !== undefined && (typeof arn !== 'string' || !WEB_ACL_ARN.test(arn))) {
      problem(
        key.edgeWebAclArn,
        'must be the ARN of a CLOUDFRONT-scope WAFv2 web ACL, which lives in us-east-1, e.g. arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>',
        arn,
      );
    }
    const parsedLimits = jsonValue(key.edgeRateLimits, context[key.edgeRateLimits], issues, '{"perIp": 30000}');
    const limitsRaw = parsedLimits === INVALID_JSON ? {} : (parsedLimits ?? {});
    const limits = (
      typeof limitsRaw === 'object' && limitsRaw !== null && !Array.isArray(limitsRaw) ? limitsRaw : {}
    ) as Record<string, unknown>;
    if (limits !== limitsRaw)
      problem(
        key.edgeRateLimits,
        'must be an object {"perIp": <n>, "perAuthorization": <n>}',
        context[key.edgeRateLimits],
      );
    for (const name of Object.keys(limits))
      if (name !== 'perIp' && name !== 'perAuthorization')
        issues.push(`${key.edgeRateLimits}.${name} is not a setting (perIp, perAuthorization)`);
    const perIp =
      limits['perIp'] === undefined
        ? DEFAULT_EDGE_RATE_LIMITS.perIp
        : integer(`${key.edgeRateLimits}.perIp`, limits['perIp'], WAF_RATE_LIMIT.min, WAF_RATE_LIMIT.max);
    const perAuthorization =
      limits['perAuthorization'] === undefined
        ? DEFAULT_EDGE_RATE_LIMITS.perAuthorization
        : integer(
            `${key.edgeRateLimits}.perAuthorization`,
            limits['perAuthorization'],
            WAF_RATE_LIMIT.min,
            WAF_RATE_LIMIT.max,
          );
    edge = {
      mode,
      ...(typeof arn === 'string' ? { webAclArn: arn } : {}),
      rateLimitPerIp: perIp ?? DEFAULT_EDGE_RATE_LIMITS.perIp,
      rateLimitPerAuthorization: perAuthorization ?? DEFAULT_EDGE_RATE_LIMITS.perAuthorization,
    };
  } else if (mode !== 'none') {
    problem(key.edgeProtection, 'must be "none" or "cloudfront-waf"', mode);
  } else {
    for (const name of [key.edgeWebAclArn, key.edgeRateLimits]) {
      if (context[name] !== undefined) issues.push(`${name} applies only with ${key.edgeProtection} "cloudfront-waf"`);
    }
  }

  return {
    ...(publishRatePerMinute === undefined ? {} : { publishRatePerMinute }),
    ...(manageRatePerMinute === undefined ? {} : { manageRatePerMinute }),
    ingestReservedConcurrency,
    pullReservedConcurrency,
    routeThrottling,
    edge,
  };
}

const INVALID_JSON = Symbol('invalid JSON');

/** An object in cdk.json, or its JSON text from `-c key='{...}'`; text that does not parse is reported as invalid JSON here. */
function jsonValue(key: string, value: unknown, issues: string[], example: string): unknown {
  const read = readJsonSetting(key, value, example);
  if ('value' in read) return read.value;
  issues.push(read.invalid);
  return INVALID_JSON;
}
