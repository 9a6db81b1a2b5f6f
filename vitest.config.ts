import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The permissions record (issue 27 §2): every AWS call the functions make in the emulated project,
 * per function (test/support/aws-operations-recorder.ts), read by the permissions project after it.
 * Git-ignored (test-artifacts/).
 */
const awsOperationsRecord = fileURLToPath(new URL('./test-artifacts/aws-operations/', import.meta.url));
const PERMISSIONS_TEST = 'test/infra/function-permissions.test.ts';

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
          // Reads what the emulated project recorded, so it runs after it, in its own project.
          exclude: [...configDefaults.exclude, PERMISSIONS_TEST],
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
          // Records every AWS call of the functions; its global setup empties the record first.
          env: { KOERIER_RECORD_AWS_OPERATIONS: awsOperationsRecord },
          globalSetup: ['./test/support/aws-operations-global.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'permissions',
          // Each function's IAM grants against what it did in the emulated project: after it (groupOrder 1).
          include: [PERMISSIONS_TEST],
          env: { KOERIER_RECORD_AWS_OPERATIONS: awsOperationsRecord },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
