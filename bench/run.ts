/**
 * `npm run bench`: runs every benchmark module in bench/ (each exports `run()`), one after the
 * other so they do not compete for the two cores, and writes bench/results/<name>.json.
 * `npm run bench -- validation ingest` runs only the named ones.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const resultsDir = path.join(benchDir, 'results');

async function main(): Promise<void> {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const modules = (await readdir(benchDir))
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
    .map((f) => f.slice(0, -3))
    .filter((name) => wanted.length === 0 || wanted.includes(name))
    .sort();
  await mkdir(resultsDir, { recursive: true });
  let failures = 0;
  for (const name of modules) {
    const started = Date.now();
    process.stdout.write(`bench ${name} … `);
    try {
      const mod = (await import(path.join(benchDir, `${name}.ts`))) as { run?: () => Promise<Record<string, unknown>> };
      if (typeof mod.run !== 'function') {
        process.stdout.write('no run(), skipped\n');
        continue;
      }
      const result = await mod.run();
      const record = {
        benchmark: name,
        measuredAt: new Date().toISOString(),
        machine: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', platform: `${os.platform()} ${os.arch()}` },
        durationMs: Date.now() - started,
        ...result,
      };
      await writeFile(path.join(resultsDir, `${name}.json`), `${JSON.stringify(record, null, 2)}\n`);
      process.stdout.write(`done in ${((Date.now() - started) / 1000).toFixed(1)} s → bench/results/${name}.json\n`);
    } catch (error) {
      failures++;
      process.stdout.write(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
  }
  process.exit(failures === 0 ? 0 : 1);
}

await main();
