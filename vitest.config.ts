import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Two cores: two workers; end-to-end files each start a whole laptop host.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    // The log scan (test/support/log-scan.ts): every process tees its log lines; the run fails on a leaked secret or event data.
    globalSetup: ['./test/support/log-scan-global.ts'],
    setupFiles: ['./test/support/log-scan-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/infra/**/*.test.ts'],
          // These files touch no process.env, no module-level state and no mocks, so one worker
          // runs file after file and loads the AWS SDK, the CDK and the code under test once,
          // instead of a fresh process per file.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'emulated',
          // Everything else, so a test file in a new folder runs (in a process of its own) too.
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**', 'test/infra/**'],
          // A process per file: the functions read their configuration once per process, and the
          // harnesses point process.env at their own emulators.
          isolate: true,
        },
      },
    ],
  },
});
