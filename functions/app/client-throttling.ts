/**
 * The per-client throttle of this container (functions/core/throttling/client-throttle.ts), wired
 * to the configuration. The authenticator (./authentication.ts) admits every authenticated
 * request through it, right after the token check and before any DynamoDB, SQS or KMS request.
 *
 * Two route groups, each with its own bucket per client:
 * - publish (`events:publish`, POST /events): twice KOERIER_PUBLISH_RATE_PER_MINUTE, as burst and
 *   as rate. It runs before the idempotency guard, so it also counts replays, which the shared
 *   window in DynamoDB does not; the headroom keeps it from refusing what the window would allow
 *   (a client replaying every request once still fits), while it caps what nothing else caps: a
 *   flood of replays, each a DynamoDB read. It also remembers the window's refusals
 *   (`rememberPublishRefusal`) until that window ends;
 * - manage (subscriptions and delivery administration): KOERIER_MANAGE_RATE_PER_MINUTE, per
 *   container only, since these routes have no shared window.
 */
import { scopes, type Scope } from '../core/auth/access-tokens.js';
import { KoerierError, problem } from '../core/http/problems.js';
import { ClientThrottle, type BucketLimits } from '../core/throttling/client-throttle.js';
import type { KoerierConfig } from '../config.js';
import type { Logger } from './logger.js';

export type RouteGroup = 'publish' | 'manage';

export function routeGroupOf(scope: Scope): RouteGroup {
  return scope === scopes.publish ? 'publish' : 'manage';
}

/** The publish bucket's burst and rate, as a multiple of the publish window's limit (see above). */
export const PUBLISH_BUCKET_HEADROOM = 2;

export function bucketLimits(
  group: RouteGroup,
  config: Pick<KoerierConfig, 'publishRatePerMinute' | 'manageRatePerMinute'>,
): BucketLimits {
  const perMinute =
    group === 'publish' ? PUBLISH_BUCKET_HEADROOM * config.publishRatePerMinute : config.manageRatePerMinute;
  return { capacity: perMinute, refillPerMinute: perMinute };
}

export interface ClientAdmission {
  /** Lets the client's request go on, or throws the 429 problem (WH-7, EDU-20: per client, never per address). */
  admit(clientId: string, scope: Scope): void;
  /** The shared publish window refused `clientId` until `untilMs`: refuse it here until then, for free. */
  rememberPublishRefusal(clientId: string, untilMs: number): void;
}

/** One container's throttle (one set of dependencies, one throttle). */
export function clientAdmission(
  config: Pick<KoerierConfig, 'publishRatePerMinute' | 'manageRatePerMinute'>,
  log: Logger,
  throttle = new ClientThrottle(),
): ClientAdmission {
  return {
    admit(clientId, scope) {
      const group = routeGroupOf(scope);
      const limits = bucketLimits(group, config);
      const decision = throttle.take(bucketKey(group, clientId), limits);
      if (decision.allowed) return;
      log.info('client throttled', { client: clientId, group, retryAfterSeconds: decision.retryAfterSeconds });
      throw new KoerierError(
        problem(
          429,
          'rate-limited',
          `At most ${limits.refillPerMinute} requests per minute per client for these operations.`,
        ),
        { headers: { 'retry-after': String(decision.retryAfterSeconds) } },
      );
    },
    rememberPublishRefusal(clientId, untilMs) {
      throttle.refuseUntil(bucketKey('publish', clientId), untilMs);
    },
  };
}

function bucketKey(group: RouteGroup, clientId: string): string {
  return `${group}\u0000${clientId}`;
}
