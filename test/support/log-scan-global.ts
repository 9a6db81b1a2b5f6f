/**
 * Global setup of the test run: makes the log scan's directory before any test process starts and,
 * after every project has run, fails the run if any logged line holds a test secret, a secret's
 * shape or event data (test/support/log-scan.ts, `findLeaks`).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findLeaks, LOG_SCAN_DIR_ENV } from './log-scan.js';

export default function setup(): () => void {
  // Each project that extends the root configuration runs its global setup too: the first one scans, once, after all.
  if (process.env[LOG_SCAN_DIR_ENV]) return () => undefined;
  const dir = mkdtempSync(join(tmpdir(), 'koerier-log-scan-'));
  // Inherited by the test processes, which are started after this.
  process.env[LOG_SCAN_DIR_ENV] = dir;
  return () => {
    const files = readdirSync(dir);
    const secrets = files
      .filter((name) => name.startsWith('secrets-'))
      .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n'));
    const logs = files.filter((name) => name.startsWith('log-'));
    const leaks = logs.flatMap((name) =>
      findLeaks(readFileSync(join(dir, name), 'utf8').split('\n'), secrets, join(dir, name)),
    );
    const lines = logs.reduce((sum, name) => sum + readFileSync(join(dir, name), 'utf8').split('\n').length - 1, 0);
    if (leaks.length > 0) {
      // Kept for reading: the files name the lines. A global teardown that throws is only reported
      // (vitest 4 still exits 0), so the exit code is set too.
      process.exitCode = 1;
      throw new Error(
        `Log scan: ${leaks.length} log line(s) hold a secret or event data (CE-16, EDU-26):\n${leaks
          .slice(0, 20)
          .map((leak) => `  ${leak.file}:${leak.line}: ${leak.what}`)
          .join('\n')}`,
      );
    }
    process.stdout.write(
      `log scan: ${lines} log lines in ${logs.length} files of the test processes hold no test secret and no event data\n`,
    );
    rmSync(dir, { recursive: true, force: true });
  };
}
