/** `npm run cost`: writes docs/COST.md from bench/results/*.json (bench/cost/model.ts). */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCostDocument, type ResultFile } from './model.js';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));

/** The result files the document is built from, by file name. */
export async function readResults(repository = REPOSITORY): Promise<Record<string, ResultFile>> {
  const dir = join(repository, 'bench', 'results');
  const files: Record<string, ResultFile> = {};
  for (const name of (await readdir(dir)).filter((file) => file.endsWith('.json')).sort()) {
    const parsed = JSON.parse(await readFile(join(dir, name), 'utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && 'costScenarios' in parsed) files[name] = parsed as ResultFile;
  }
  return files;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await writeFile(join(REPOSITORY, 'docs', 'COST.md'), renderCostDocument(await readResults()));
  console.log('docs/COST.md written');
}
