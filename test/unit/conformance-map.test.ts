/**
 * docs/CONFORMANCE.md is a promise: for each requirement it names the code that implements it and
 * the tests that prove it. This test keeps the promise honest: every file it names exists, every
 * test file it names has a test whose title carries the requirement ID, and every requirement ID a
 * test title carries is in the map.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const map = readFileSync(join(root, 'docs/CONFORMANCE.md'), 'utf8');
const ID = String.raw`(?:CESQL|CE|HTTP|JSON|WH|EDU-IDEM|EDU|CARD|PRIV|LIVE|SELF|ZGW|ORD|DR|SCALE)-(?:\d+|IN)`;

interface Row {
  readonly id: string;
  readonly code: string[];
  readonly tests: string[];
}

const rows: Row[] = map
  .split('\n')
  .filter((line) => new RegExp(`^\\|\\s*${ID}\\s*\\|`).test(line))
  .map((line) => {
    const cells = line.split('|').map((c) => c.trim());
    const paths = (cell: string | undefined) =>
      [...(cell ?? '').matchAll(/`([^`]+\.(?:ts|json|md))`/g)].map((m) => m[1]!);
    return { id: cells[1]!, code: paths(cells[4]), tests: paths(cells[5]) };
  });

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? testFiles(path) : path.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

const titleIds = (source: string): Set<string> => {
  const ids = new Set<string>();
  for (const title of source.matchAll(/\b(?:it|test|describe)(?:\.\w+)*(?:\([^)]*\))?\(\s*(['"`])((?:(?!\1).)*)\1/g)) {
    for (const id of title[2]!.matchAll(new RegExp(ID, 'g'))) ids.add(id[0]);
  }
  return ids;
};

describe('docs/CONFORMANCE.md', () => {
  it('lists requirements', () => {
    expect(rows.length).toBeGreaterThan(40);
  });

  it('names only code and test files that exist', () => {
    const missing = rows.flatMap((row) =>
      [...row.code, ...row.tests].filter((path) => !existsSync(join(root, path))).map((path) => `${row.id}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('names, for every requirement with tests, test files whose titles carry its ID', () => {
    const unproven = rows.flatMap((row) =>
      row.tests
        .filter((path) => path.endsWith('.test.ts') && !titleIds(readFileSync(join(root, path), 'utf8')).has(row.id))
        .map((path) => `${row.id}: ${path}`),
    );
    expect(unproven).toEqual([]);
  });

  it('maps every requirement ID that a test title names', () => {
    const mapped = new Set(rows.map((row) => row.id));
    const unmapped = new Set<string>();
    for (const file of testFiles(join(root, 'test'))) {
      for (const id of titleIds(readFileSync(join(root, file), 'utf8')))
        if (!mapped.has(id)) unmapped.add(`${id} (${file})`);
    }
    expect([...unmapped]).toEqual([]);
  });
});
