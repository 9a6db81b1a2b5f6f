import { defineConfig } from 'vitest/config';

/**
 * The test run Stryker repeats for every mutant of `functions/core` (`npm run mutate`).
 * Unit tests only: the integration and end-to-end files start emulators or a whole laptop host,
 * which per mutant would turn minutes into hours. `functions/core` holds no I/O, so its unit
 * tests are the ones that can kill its mutants; docs/MUTATION.md says what this leaves out.
 */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    exclude: [
      // Check docs/CONFORMANCE.md and docs/COST.md (against bench/results, which the sandbox leaves out), not functions/core.
      'test/unit/conformance-map.test.ts',
      'test/unit/cost-document.test.ts',
      // Its adversarial-input test alone takes seconds and covers nearly every CloudEvents
      // validator, so it would run for almost every mutant there (docs/MUTATION.md).
      'test/unit/cloudevents/hostile-input.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
