/**
 * Global setup of the emulated project (vitest.config.ts), run once before any of its test
 * processes starts, and only when the run has emulated tests to run: gives this run a record of its
 * own, `<KOERIER_RECORD_AWS_OPERATIONS>/<run>/`, and tells the test processes started after it, the
 * permissions project's among them, which one (`AWS_OPERATIONS_RUN_ENV`): the recorder writes
 * there (test/support/aws-operations-recorder.ts), and test/infra/function-permissions.test.ts
 * reads exactly that record and may not skip for want of one.
 *
 * A run of its own, because several runs may share a working tree (a second `vitest` started while
 * one runs): none empties another's record. The records of runs whose vitest process has ended are
 * removed here, so the folder holds the runs going on and, until the next run starts, the last one.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { AWS_OPERATIONS_RUN_ENV, RECORD_AWS_OPERATIONS_ENV } from './aws-operations-recorder.js';

/** What a run's `run.json` says. */
export interface AwsOperationsRun {
  readonly startedAt: string;
  /** The vitest process of the run. */
  readonly pid: number;
}

export default function setup(project: TestProject): void {
  const configured = project.config.env[RECORD_AWS_OPERATIONS_ENV];
  if (!configured || process.env[AWS_OPERATIONS_RUN_ENV]) return;
  const directory = resolve(String(configured));
  mkdirSync(directory, { recursive: true });
  for (const entry of readdirSync(directory)) {
    const run = readRun(join(directory, entry));
    if (!run || !alive(run.pid)) rmSync(join(directory, entry), { recursive: true, force: true });
  }
  const startedAt = new Date().toISOString();
  const name = `${startedAt.replace(/[:.]/g, '-')}-${process.pid}`;
  mkdirSync(join(directory, name));
  writeFileSync(
    join(directory, name, 'run.json'),
    `${JSON.stringify({ startedAt, pid: process.pid } satisfies AwsOperationsRun)}\n`,
  );
  // Inherited by every test process started after this one.
  process.env[AWS_OPERATIONS_RUN_ENV] = name;
}

/** The run a folder of the record holds, or undefined for anything else. */
export function readRun(folder: string): AwsOperationsRun | undefined {
  try {
    const file = join(folder, 'run.json');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as AwsOperationsRun) : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
