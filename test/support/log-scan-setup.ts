/**
 * A setup file of every project: tees every line any Koerier logger of this test process writes to
 * `<scan dir>/log-<pid>.jsonl` (test/support/log-scan.ts). Once per process: the unit project runs
 * its files in one process without isolation.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { logger } from '../../functions/app/logger.js';
import { LOG_SCAN_DIR_ENV } from './log-scan.js';

const TEED = Symbol.for('koerier.log-scan.teed');
const dir = process.env[LOG_SCAN_DIR_ENV];
const marks = globalThis as { [TEED]?: true };
if (dir && !marks[TEED]) {
  marks[TEED] = true;
  const file = join(dir, `log-${process.pid}.jsonl`);
  logger.observe((line) => appendFileSync(file, `${line}\n`));
}
