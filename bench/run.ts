/**
 * `npm run bench`: runs every benchmark module in bench/ (each exports `run()`), one after the
 * other so they do not compete for the two cores, each in its own process, and writes
 * bench/results/<name>.json. `npm run bench -- validation ingest` runs only the named ones.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const resultsDir = path.join(benchDir, 'results');

function runChild(name: string, resultFile: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(benchDir, '_child.ts'), name, resultFile], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, KOERIER_LOG_LEVEL: 'error' },
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const modules = (await readdir(benchDir))
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
    .map((f) => f.slice(0, -3))
    .filter((name) => wanted.length === 0 || wanted.includes(name))
    .sort();
  await mkdir(resultsDir, { recursive: true });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'koerier-bench-'));
  let failures = 0;
  for (const name of modules) {
    const started = Date.now();
    process.stdout.write(`bench ${name} … `);
    const resultFile = path.join(scratch, `${name}.json`);
    const code = await runChild(name, resultFile);
    if (code !== 0) {
      failures++;
      process.stdout.write(`FAILED (exit ${code})\n`);
      continue;
    }
    const result = JSON.parse(await readFile(resultFile, 'utf8')) as Record<string, unknown>;
    const record = {
      benchmark: name,
      measuredAt: new Date().toISOString(),
      machine: {
        node: process.version,
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        platform: `${os.platform()} ${os.arch()}`,
      },
      durationMs: Date.now() - started,
      ...result,
    };
    await writeFile(path.join(resultsDir, `${name}.json`), `${JSON.stringify(record, null, 2)}\n`);
    process.stdout.write(`done in ${((Date.now() - started) / 1000).toFixed(1)} s → bench/results/${name}.json\n`);
  }
  await rm(scratch, { recursive: true, force: true });
  process.exit(failures === 0 ? 0 : 1);
}

await main();
