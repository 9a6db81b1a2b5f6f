// Mutation testing of functions/core (`npm run mutate`; docs/MUTATION.md). Not part of `npm test`.
import process from 'node:process';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.stryker.config.ts' },
  // The OpenAPI description is a document (object literals of prose), not behaviour: left out.
  mutate: ['functions/core/**/*.ts', '!functions/core/api-description/**'],
  coverageAnalysis: 'perTest',
  // Static mutants (in code run once at import: constant tables, module-level regexes) need every
  // related test file reloaded per mutant; on this two-core machine they took 60 % of the time.
  // They are reported as "static, not run" per area; `MUTATE_STATIC=true npm run mutate -- --force`
  // tests them too (docs/MUTATION.md).
  ignoreStatic: process.env.MUTATE_STATIC !== 'true',
  // The machine is shared: one test process unless asked for more (`npm run mutate -- --concurrency 2`).
  concurrency: 1,
  timeoutMS: 10_000,
  // Only mutants whose code or covering tests changed since the last run are tested again.
  incremental: true,
  incrementalFile: 'bench/results/stryker-incremental.json',
  reporters: ['json', 'clear-text', 'progress'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
  ignorePatterns: ['.koerier', 'cdk.out', 'coverage', 'reports', 'bench/results', '.stryker-tmp'],
};
