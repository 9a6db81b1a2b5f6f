import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../functions/config.js';

describe('configuration', () => {
  it('rejects a missing issuer with a message naming the variable', () => {
    expect(() => loadConfig({ KOERIER_AUDIENCE: 'a', KOERIER_JWKS_URL: 'https://x/jwks' })).toThrow(/KOERIER_ISSUER is required/);
  });
});
