/**
 * `npm run mutate`: StrykerJS over functions/core (stryker.config.mjs), then the per-area figures
 * (bench/mutation/report.ts). Arguments go to Stryker, e.g.
 * `npm run mutate -- --mutate 'functions/core/routing/**\/*.ts'` or `-- --concurrency 2`.
 * Not part of `npm test`; docs/MUTATION.md says how to read the results.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readlink, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeMutationReport } from './report.js';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const sandboxParent = path.join(repositoryRoot, '.stryker-tmp');

/**
 * Stryker copies the repository into .stryker-tmp/sandbox-*; the CloudEvents conformance tests
 * read ../shared/testdata next to the repository, so the sandbox needs a ../shared as well.
 */
async function linkSharedNextToSandboxes(): Promise<void> {
  const shared = path.resolve(repositoryRoot, '../shared');
  if (!existsSync(shared)) return;
  await mkdir(sandboxParent, { recursive: true });
  const link = path.join(sandboxParent, 'shared');
  const current = await readlink(link).catch(() => undefined);
  if (current === undefined) await symlink(shared, link);
}

/** Stryker's log lines carry ANSI colour codes (ESC [ … m); the report keeps plain text. */
const stripColours = (line: string): string =>
  line.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');

function runStryker(args: readonly string[]): Promise<{ exitCode: number; reusedLine: string | undefined }> {
  return new Promise((resolve) => {
    const child = spawn(path.join(repositoryRoot, 'node_modules/.bin/stryker'), ['run', ...args], {
      cwd: repositoryRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let reusedLine: string | undefined;
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines)
        if (/mutant result\(s\) are reused/i.test(line))
          reusedLine = stripColours(line)
            .replace(/^\s*Result:\s*/, '')
            .trim();
    });
    child.on('exit', (code) => resolve({ exitCode: code ?? 1, reusedLine }));
  });
}

const started = Date.now();
await linkSharedNextToSandboxes();
const { exitCode, reusedLine } = await runStryker(process.argv.slice(2));
if (exitCode !== 0) {
  console.error(`stryker exited with ${exitCode}; bench/results/mutation.json left as it was`);
  process.exit(exitCode);
}
const summary = await writeMutationReport({
  durationMs: Date.now() - started,
  incremental: reusedLine ?? 'no incremental report found: every mutant was tested',
});
console.log(summary);
