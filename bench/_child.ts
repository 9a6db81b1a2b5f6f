/**
 * Runs one benchmark module in its own process (bench/run.ts spawns it): each benchmark gets a
 * clean heap and may start its own laptop host, which allows one per process.
 * Usage: tsx bench/_child.ts <name> <result-file>
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [name, resultFile] = process.argv.slice(2);
if (!name || !resultFile) throw new Error('usage: tsx bench/_child.ts <name> <result-file>');
const benchDir = path.dirname(fileURLToPath(import.meta.url));
const mod = (await import(path.join(benchDir, `${name}.ts`))) as { run?: () => Promise<Record<string, unknown>> };
if (typeof mod.run !== 'function') throw new Error(`bench/${name}.ts exports no run()`);
const result = await mod.run();
await writeFile(resultFile, JSON.stringify(result));
process.exit(0);
