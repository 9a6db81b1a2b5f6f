/**
 * lib/runtime-settings.ts lists the figures a deployment may set as CDK context; these tests keep
 * each row in step with what functions/config.ts reads: the same default, and every value the
 * context accepts is one the functions accept too.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../functions/config.js';
import { parseRuntimeSettings, runtimeSettings } from '../../lib/runtime-settings.js';

const base = {
  KOERIER_ISSUER: 'https://issuer.example',
  KOERIER_AUDIENCE: 'koerier',
  KOERIER_JWKS_URL: 'https://issuer.example/jwks',
};

describe('runtime settings settable as CDK context (issue 12 item 1)', () => {
  it.each(runtimeSettings.map((setting) => [setting.contextKey, setting] as const))(
    'CARD-2: %s has the default the functions use, and its bounds are within what they accept',
    (_key, setting) => {
      expect(setting.read(loadConfig(base))).toBe(setting.default);
      for (const value of [setting.min, setting.max]) {
        const environment = parseRuntimeSettings({ [setting.contextKey]: value }, []);
        expect(environment).toEqual({ [setting.env]: String(value) });
        expect(setting.read(loadConfig({ ...base, ...environment }))).toBe(value);
      }
      const issues: string[] = [];
      expect(parseRuntimeSettings({ [setting.contextKey]: setting.max + 1 }, issues)).toEqual({});
      expect(issues).toEqual([
        expect.stringMatching(
          new RegExp(`^${setting.contextKey} must be a whole number from ${setting.min} to ${setting.max}, e\\.g\\. `),
        ),
      ]);
    },
  );

  it('CARD-2: every context key and every function setting appears once', () => {
    expect(new Set(runtimeSettings.map((s) => s.contextKey)).size).toBe(runtimeSettings.length);
    expect(new Set(runtimeSettings.map((s) => s.env)).size).toBe(runtimeSettings.length);
  });
});
