/**
 * Issue 15: the functions run without `--enable-source-maps`; functions/app/source-mapped-stacks.ts
 * maps their stacks to the TypeScript sources when one is formatted. A real bundle, built with the
 * deployed esbuild options (lib/bundling.ts) from a fixture whose lines are known, run with plain
 * `node` in a child process, as Lambda runs it.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE, esbuildOptions } from '../../lib/bundling.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const HOOK = join(REPO_ROOT, 'functions', 'app', 'source-mapped-stacks.ts');

const THROWER = `/** Errors thrown from known lines. */
export function parseAmount(text: string): number {
  const amount = Number(text);
  if (Number.isNaN(amount)) throw new TypeError(\`not an amount: \${text}\`);
  return amount;
}

export class Ledger {
  constructor(readonly owner: string) {
    if (owner === '') throw new Error();
  }

  record(text: string): number {
    return parseAmount(text);
  }
}

export const recordFor = (owner: string, text: string): number => new Ledger(owner).record(text);

export async function recordLater(text: string): Promise<number> {
  await Promise.resolve();
  return recordFor('treasury', text);
}

export function allocate(size: number): Buffer {
  return Buffer.alloc(size);
}
`;

/** Reached only through import(): esbuild splits it into a chunk of its own beside index.mjs. */
const LAZY = `/** Loaded on first use. */
export function checkLater(document: string): never {
  throw new SyntaxError(\`not a document: \${document}\`);
}
`;

const ENTRY = `import ${JSON.stringify(HOOK)};
import { unlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ledger, allocate, recordFor, recordLater } from './thrower.js';

function print(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    console.log((error as Error).stack);
  }
}

const mode = process.argv[2];
if (mode === 'delete-map') unlinkSync(\`\${fileURLToPath(import.meta.url)}.map\`);
if (mode === 'limit') Error.stackTraceLimit = 2;
if (mode === 'caught' || mode === 'delete-map' || mode === 'limit') print(() => recordFor('treasury', 'ten'));
if (mode === 'constructor') print(() => new Ledger(''));
if (mode === 'node-error') print(() => allocate(-1));
if (mode === 'async') {
  try {
    await recordLater('ten');
  } catch (error) {
    console.log((error as Error).stack);
  }
}
if (mode === 'chunk') {
  const { checkLater } = await import('./lazy.js');
  print(() => checkLater('{'));
}
if (mode === 'uncaught') setTimeout(() => recordFor('treasury', 'ten'), 1);
`;

function runNode(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { timeout: 20_000, env: { PATH: process.env['PATH'] ?? '' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** `line:column` (1-based, as a stack prints them) of `token` on the fixture line that holds `lineText`. */
function position(source: string, lineText: string, token: string): string {
  const lines = source.split('\n');
  const index = lines.findIndex((line) => line.includes(lineText));
  expect(index, lineText).toBeGreaterThanOrEqual(0);
  return `${index + 1}:${lines[index]!.indexOf(token, lines[index]!.indexOf(lineText)) + 1}`;
}

/** V8's own frame of a bundle: the generated location, a file URL of the bundle, no .ts. */
const BUNDLE_FRAME = /^ {4}at (?:\S.* \()?file:\/\/\S+\/index\.mjs:\d+:\d+\)?$/;

describe('issue 15: stacks of a bundle name the TypeScript sources without --enable-source-maps', () => {
  let dir: string;
  let bundle: string;
  let thrower: string;
  let entry: string;
  let lazy: string;

  const run = (mode: string, file = bundle) => runNode([file, mode]);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'koerier-stacks-'));
    thrower = join(dir, 'thrower.ts');
    entry = join(dir, 'entry.ts');
    lazy = join(dir, 'lazy.ts');
    await writeFile(thrower, THROWER);
    await writeFile(entry, ENTRY);
    await writeFile(lazy, LAZY);
    bundle = join(dir, 'out', BUNDLE_FILE);
    await build(esbuildOptions(entry, join(dir, 'out')));
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('issue 15: a caught error names each .ts file, line, column and the original function names, the minifier notwithstanding', async () => {
    const { code, stdout } = await run('caught');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('TypeError: not an amount: ten');
    expect(lines[1]).toBe(`    at parseAmount (${thrower}:${position(THROWER, 'throw new TypeError', 'new')})`);
    // A method keeps V8's name: the receiver's class name is the minified one, which the frame cannot lead back to.
    expect(lines[2]).toMatch(
      new RegExp(
        `^ {4}at \\S+\\.record \\(${thrower}:${position(THROWER, 'return parseAmount(text)', 'parseAmount')}\\)$`,
      ),
    );
    expect(lines[3]).toBe(
      `    at recordFor (${thrower}:${position(THROWER, 'export const recordFor', 'record(text)')})`,
    );
    expect(lines[4]).toBe(`    at ${entry}:${position(ENTRY, "mode === 'limit') print(", 'recordFor')}`);
    expect(lines[5]).toBe(`    at print (${entry}:${position(ENTRY, '    run();', 'run')})`);
    // Frames outside the bundle are V8's own.
    expect(lines.slice(7).every((line) => line.includes('(node:internal/'))).toBe(true);
    expect(stdout).not.toContain('index.mjs');
  });

  it('issue 15: an error thrown in a constructor, with no message: header `Error`, the frame `new <class>`', async () => {
    const { stdout } = await run('constructor');
    const lines = stdout.split('\n');
    expect(lines[0]).toBe('Error');
    expect(lines[1]).toBe(`    at new Ledger (${thrower}:${position(THROWER, "if (owner === '')", 'new')})`);
  });

  it('issue 15: async frames keep their `async` and are mapped (V8 places an awaiting frame at its `await`)', async () => {
    const { stdout } = await run('async');
    expect(stdout).toContain(
      `    at recordLater (${thrower}:${position(THROWER, "return recordFor('treasury', text)", 'recordFor')})`,
    );
    expect(stdout).toContain(`    at async ${entry}:${position(ENTRY, 'await recordLater', 'await')}`);
  });

  it("issue 15: Node's own errors keep Node's header ([ERR_…]) and its own frames; the bundle's are mapped", async () => {
    const { stdout } = await run('node-error');
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^RangeError \[ERR_OUT_OF_RANGE\]: The value of "size" is out of range\./);
    expect(lines.slice(1).some((line) => /^ {4}at .*\(node:buffer:\d+:\d+\)$/.test(line))).toBe(true);
    expect(stdout).toContain(`    at allocate (${thrower}:${position(THROWER, 'return Buffer.alloc', 'alloc')})`);
  });

  it('issue 15: Error.stackTraceLimit holds', async () => {
    const { stdout } = await run('limit');
    expect(stdout.trimEnd().split('\n')).toEqual([
      'TypeError: not an amount: ten',
      `    at parseAmount (${thrower}:${position(THROWER, 'throw new TypeError', 'new')})`,
      expect.stringMatching(/\.record \(/),
    ]);
  });

  it('issue 15: an uncaught error, as Node reports it on stderr, has the mapped stack', async () => {
    const { code, stderr } = await run('uncaught');
    expect(code).toBe(1);
    expect(stderr).toContain(
      `TypeError: not an amount: ten\n    at parseAmount (${thrower}:${position(THROWER, 'throw new TypeError', 'new')})\n`,
    );
    expect(stderr).toContain(`    at recordFor (${thrower}:`);
  });

  it("issue 15: a frame in a chunk split off beside index.mjs is mapped through the chunk's own map", async () => {
    const chunks = (await readdir(join(dir, 'out'))).filter(
      (file) => file.startsWith('lazy-') && file.endsWith('.mjs'),
    );
    expect(chunks).toHaveLength(1);
    const { code, stdout } = await run('chunk');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('SyntaxError: not a document: {');
    expect(lines[1]).toBe(`    at checkLater (${lazy}:${position(LAZY, 'throw new SyntaxError', 'new')})`);
    expect(lines[2]).toBe(`    at ${entry}:${position(ENTRY, "print(() => checkLater('{'))", 'checkLater')}`);
    expect(stdout).not.toContain('.mjs');
  });

  it("issue 15: a chunk whose map is missing keeps V8's own frames for it; the index's frames are still mapped", async () => {
    const copy = join(dir, 'chunk-without-map');
    await mkdir(copy);
    for (const file of await readdir(join(dir, 'out')))
      if (!(file.startsWith('lazy-') && file.endsWith('.map')))
        await copyFile(join(dir, 'out', file), join(copy, file));
    const { code, stdout } = await run('chunk', join(copy, BUNDLE_FILE));
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^ {4}at \S+ \(file:\/\/\S+\/lazy-\w+\.mjs:\d+:\d+\)$/);
    expect(lines[2]).toBe(`    at ${entry}:${position(ENTRY, "print(() => checkLater('{'))", 'checkLater')}`);
  });

  it("issue 15: without a map the stack is V8's own, and nothing throws", async () => {
    const alone = join(dir, 'without-map', BUNDLE_FILE);
    await mkdir(join(dir, 'without-map'));
    await copyFile(bundle, alone);
    const { code, stdout } = await run('caught', alone);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('TypeError: not an amount: ten');
    expect(lines.slice(1, 6).every((line) => BUNDLE_FRAME.test(line))).toBe(true);
    expect(stdout).not.toContain('.ts:');
  });

  it('issue 15: nothing is read at import — a map deleted after the import and before the first stack leaves V8’s own stack', async () => {
    const copy = join(dir, 'deleted-after-import', BUNDLE_FILE);
    await mkdir(join(dir, 'deleted-after-import'));
    await copyFile(bundle, copy);
    await copyFile(`${bundle}.map`, `${copy}.map`);
    const { code, stdout } = await run('delete-map', copy);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('TypeError: not an amount: ten');
    expect(lines.slice(1, 6).every((line) => BUNDLE_FRAME.test(line))).toBe(true);
    expect(stdout).not.toContain('.ts:');
  });

  it('issue 15: imported from its .ts source (vitest, tsx, the laptop host) it installs nothing', async () => {
    const before = Error.prepareStackTrace;
    await import('../../functions/app/source-mapped-stacks.js');
    expect(Error.prepareStackTrace).toBe(before);
  });

  it('issue 15: the ingest bundle, as deployed, imports with the hook and maps a thrown error to functions/…ts', async () => {
    const ingest = join(dir, 'ingest', BUNDLE_FILE);
    await build(esbuildOptions(join(REPO_ROOT, 'functions/handlers/ingest.ts'), join(dir, 'ingest')));
    const caller = join(dir, 'call-ingest.mjs');
    // No event: the API Gateway adapter reads a property of undefined, in the bundle.
    await writeFile(
      caller,
      `const { handler } = await import(process.argv[2]);\ntry { await handler(undefined, {}); } catch (error) { console.log(error.stack); }\n`,
    );
    const { code, stdout } = await runNode([caller, ingest]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^TypeError: Cannot read properties of undefined/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^ {4}at (?:.* \\()?${join(REPO_ROOT, 'functions', 'handlers', 'shared', 'api-gateway.ts')}:\\d+:\\d+\\)?$`,
      ),
    );
  }, 60_000);
});
