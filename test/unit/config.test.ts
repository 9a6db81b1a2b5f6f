import { describe, expect, it } from 'vitest';
import { loadConfig, MAX_IDEMPOTENCY_TTL_SECONDS } from '../../functions/config.js';
import { queues } from '../../lib/resources.js';

const base = { KOERIER_ISSUER: 'https://issuer.example', KOERIER_AUDIENCE: 'koerier', KOERIER_JWKS_URL: 'https://issuer.example/jwks' };

describe('configuration', () => {
  it('rejects a missing issuer with a message naming the variable', () => {
    expect(() => loadConfig({ KOERIER_AUDIENCE: 'a', KOERIER_JWKS_URL: 'https://x/jwks' })).toThrow(/KOERIER_ISSUER is required/);
  });

  it('EDU-IDEM-7: keys live 7 days by default, and never longer than SQS keeps a delivery that is still retrying', () => {
    expect(loadConfig(base).idempotency.ttlSeconds).toBe(7 * 24 * 3600);
    expect(MAX_IDEMPOTENCY_TTL_SECONDS).toBeLessThan(queues.deliveries.retentionSeconds);
    expect(() => loadConfig({ ...base, KOERIER_IDEMPOTENCY_TTL_SECONDS: String(MAX_IDEMPOTENCY_TTL_SECONDS + 1) })).toThrow(/KOERIER_IDEMPOTENCY_TTL_SECONDS must be an integer/);
  });

  it('EDU-7: entitlements of the wrong shape stop the start, not every router batch', () => {
    expect(() => loadConfig({ ...base, KOERIER_ENTITLEMENTS: '{"dev-subscriber":{"types":["x"]}}' })).toThrow(/KOERIER_ENTITLEMENTS/);
  });

  it('EDU-IN: publish grants default to nobody and must be client → list of source prefixes', () => {
    expect(loadConfig(base).publishGrants).toEqual({});
    expect(() => loadConfig({ ...base, KOERIER_PUBLISHERS: '{"a":"urn:nld:"}' })).toThrow(/KOERIER_PUBLISHERS/);
  });
});
