/**
 * `npm run cost`: writes docs/COST.md from bench/results/*.json (bench/cost/model.ts), keeping its
 * idle month, which `npm run docs:generate` writes from the synthesized template.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markedSection } from '../../lib/documents/marked-sections.js';
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
  const file = join(REPOSITORY, 'docs', 'COST.md');
  const idleMonth = markedSection(await readFile(file, 'utf8'), 'idle-month');
  await writeFile(file, renderCostDocument(await readResults(), idleMonth));
  console.log('docs/COST.md written');
}
