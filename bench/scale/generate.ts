/**
 * `npm run scale`: runs the scale simulation (bench/scale/simulation.ts) on the committed
 * bench/results and writes its tables into docs/SCALE.md between their markers.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { readResults } from '../cost/generate.js';
import { renderScaleDocument } from './scale-document.js';

const file = fileURLToPath(new URL('../../docs/SCALE.md', import.meta.url));
await writeFile(file, renderScaleDocument(await readFile(file, 'utf8'), await readResults()));
console.log('docs/SCALE.md written');
