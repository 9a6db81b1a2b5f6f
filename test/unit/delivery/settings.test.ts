import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, settingEnv } from '../../../functions/config.js';

const base = { [settingEnv.issuer]: 'https://issuer.test', [settingEnv.audience]: 'koerier', [settingEnv.jwksUrl]: 'https://issuer.test/jwks' };

describe('delivery settings', () => {
  it('EDU-18: the default schedule retries for 24 hours from 30 s up to 4-hour gaps; suspension after 5 days', () => {
    const { delivery } = loadConfig(base);
    expect(delivery.retry).toEqual({ initialDelaySeconds: 30, maxDelaySeconds: 4 * 3600, windowSeconds: 24 * 3600 });
    expect(delivery.suspendAfterSeconds).toBe(5 * 24 * 3600);
    expect(delivery.breaker).toEqual({ failureThreshold: 5, cooldownSeconds: 60 });
    expect(delivery).toMatchObject({ connectTimeoutMs: 5000, responseTimeoutMs: 10_000, maxResponseBytes: 65_536 });
  });

  it('a shortened schedule for tests comes from the environment, and nonsense is refused', () => {
    const { delivery } = loadConfig({ ...base, [settingEnv.deliveryRetryInitialSeconds]: '1', [settingEnv.deliveryRetryWindowSeconds]: '6' });
    expect(delivery.retry).toMatchObject({ initialDelaySeconds: 1, windowSeconds: 6 });
    expect(() => loadConfig({ ...base, [settingEnv.deliveryRetryInitialSeconds]: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [settingEnv.deliveryResponseTimeoutMs]: 'soon' })).toThrow(ConfigError);
  });

  it('metric records are written in Lambda only', () => {
    expect(loadConfig(base).delivery.emitMetrics).toBe(false);
    expect(loadConfig({ ...base, AWS_LAMBDA_FUNCTION_NAME: 'koerier-delivery' }).delivery.emitMetrics).toBe(true);
  });
});
