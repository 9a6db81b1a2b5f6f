/**
 * Delivery settings for a test host whose failing targets must be suspended within seconds, not
 * the production day (issue 30 item 3 alerts, operational events, the suspension itself): a retry
 * every second, suspension after three seconds of nothing but failures, and a circuit breaker that
 * never opens first (its cooldown would postpone the retries that lead to the suspension).
 *
 *   koerier = await startTestHost({ ...fastSuspension({ retryWindowSeconds: 120 }), ...others });
 */
import { settingEnv } from '../../functions/config.js';

export function fastSuspension(options: { readonly retryWindowSeconds?: number } = {}): Record<string, string> {
  return {
    [settingEnv.deliveryRetryInitialSeconds]: '1',
    [settingEnv.deliveryRetryMaxDelaySeconds]: '1',
    [settingEnv.deliveryRetryWindowSeconds]: String(options.retryWindowSeconds ?? 60),
    [settingEnv.deliveryBreakerFailures]: '100',
    [settingEnv.deliverySuspendAfterSeconds]: '3',
  };
}
