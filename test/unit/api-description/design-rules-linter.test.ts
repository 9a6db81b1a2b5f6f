/**
 * Koerier's API description against the Logius API Design Rules linter (Spectral, the
 * `adr-linter` rulesets of ../shared/testdata/adr-ruleset). Issue 14, item 5.
 */
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { adrRulesetDirectory, lintWithAdrRuleset } from '../../support/adr-linter.js';

const RULESETS = ['adr-linter.develop.yaml', 'adr-linter.main.yaml'] as const;
const absent = adrRulesetDirectory === undefined;
const because = absent ? ' (skipped: ../shared/testdata/adr-ruleset is absent, so the linter has no ruleset)' : '';
if (absent) console.warn(`API Design Rules linter not run${because}`);

const deployed = openApiDocument({
  serverUrl: 'https://api.example.org/v1',
  tokenUrl: 'https://issuer.example.org/oauth/token',
});
const unconfigured = openApiDocument({ tokenUrl: 'https://issuer.example.org/oauth/token' });

describe('the API description and the Logius API Design Rules linter', () => {
  for (const ruleset of RULESETS) {
    it.skipIf(absent)(
      `ADR: /openapi.json has zero errors with ${ruleset}, with and without a public base URL${because}`,
      { timeout: 120_000 },
      async () => {
        for (const document of [deployed, unconfigured]) {
          const errors = (await lintWithAdrRuleset(ruleset, document)).filter(
            (finding) => finding.severity === 'error',
          );
          expect(errors).toEqual([]);
        }
      },
    );
  }

  it.skipIf(absent)(
    `ADR: the linter finds what the rules forbid, so zero errors means something${because}`,
    { timeout: 120_000 },
    async () => {
      const broken = structuredClone({ ...deployed, servers: [{ url: 'https://api.example.org' }] }) as typeof deployed;
      const brokenPaths = broken.paths as Record<
        string,
        Record<string, { responses: Record<string, Record<string, unknown>> }>
      >;
      delete brokenPaths['/subscriptions/{id}']!['delete']!.responses['400'];
      delete (brokenPaths['/openapi.json']!['get']!.responses['200']!['headers'] as Record<string, unknown>)[
        'API-Version'
      ];
      const rules = (await lintWithAdrRuleset('adr-linter.develop.yaml', broken))
        .filter((f) => f.severity === 'error')
        .map((f) => `${f.rule} ${f.path}`);
      expect(rules).toEqual(
        expect.arrayContaining([
          'nlgov:include-major-version-in-uri servers.0.url',
          'nlgov:problem-invalid-input paths./subscriptions/{id}.delete.responses',
          'nlgov:missing-version-header paths./openapi.json.get.responses.200.headers',
        ]),
      );
    },
  );
});
