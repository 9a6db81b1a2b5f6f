/**
 * The Logius API Design Rules linter (Spectral with the `adr-linter` ruleset) as a function, for
 * tests. The rulesets are not copied into Koerier: they are read from ../shared/testdata/adr-ruleset
 * (see its README for where each comes from), and `adrRulesetDirectory` is undefined without it.
 */
import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';

const directory = fileURLToPath(new URL('../../../shared/testdata/adr-ruleset/', import.meta.url));

/** The directory of the rulesets, or undefined when ../shared is not there. */
export const adrRulesetDirectory: string | undefined = fs.existsSync(directory) ? directory : undefined;

export interface AdrFinding {
  readonly severity: 'error' | 'warning' | 'info' | 'hint';
  readonly rule: string;
  readonly path: string;
  readonly message: string;
}

const BUNDLER = '@stoplight/spectral-ruleset-bundler/with-loader';
type BundleAndLoad = (
  file: string,
  io: { fs: typeof fs; fetch: typeof globalThis.fetch },
) => Promise<Parameters<spectralCore.Spectral['setRuleset']>[0]>;

const SEVERITIES = ['error', 'warning', 'info', 'hint'] as const;

/** Lints `document` with the ruleset file `rulesetName` of ../shared/testdata/adr-ruleset. */
export async function lintWithAdrRuleset(rulesetName: string, document: unknown): Promise<AdrFinding[]> {
  if (!adrRulesetDirectory) throw new Error(`${directory} is absent`);
  const spectral = new spectralCore.Spectral();
  // Loaded by a name the compiler does not follow: the bundler's types pull in the DOM library,
  // whose fetch types would replace Node's for the whole project.
  const bundler = (await import(BUNDLER as string)) as { bundleAndLoadRuleset: BundleAndLoad };
  spectral.setRuleset(
    await bundler.bundleAndLoadRuleset(`${adrRulesetDirectory}${rulesetName}`, { fs, fetch: globalThis.fetch }),
  );
  const results = await spectral.run(
    new spectralCore.Document(JSON.stringify(document, null, 2), spectralParsers.Json),
  );
  return results.map((result) => ({
    severity: SEVERITIES[result.severity] ?? 'hint',
    rule: String(result.code),
    path: result.path.join('.'),
    message: result.message,
  }));
}
