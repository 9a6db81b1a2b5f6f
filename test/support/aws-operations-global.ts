/**
 * Global setup of the emulated project (vitest.config.ts), run once before any of its test
 * processes starts, and only when the run has emulated tests to run: empties the permissions
 * record's directory (the project's `KOERIER_RECORD_AWS_OPERATIONS`), so a record never mixes two
 * runs, and tells the test processes started after it, the permissions project's among them, that
 * this run records (`AWS_OPERATIONS_RECORDED_ENV`): then test/infra/function-permissions.test.ts
 * may not skip for want of a record.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { RECORD_AWS_OPERATIONS_ENV } from './aws-operations-recorder.js';

/** Set (to the record's directory) in every test process of a run whose emulated project records. */
export const AWS_OPERATIONS_RECORDED_ENV = 'KOERIER_AWS_OPERATIONS_RECORDED_THIS_RUN';

export default function setup(project: TestProject): void {
  const configured = project.config.env[RECORD_AWS_OPERATIONS_ENV];
  if (!configured) return;
  const directory = resolve(String(configured));
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'run.json'), `${JSON.stringify({ startedAt: new Date().toISOString(), project: project.name })}\n`);
  process.env[AWS_OPERATIONS_RECORDED_ENV] = directory;
}
