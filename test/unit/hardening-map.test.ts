/**
 * docs/HARDENING.md maps each finding of the outside review (issue 8) to the code that answers it
 * and the tests that fail when that code breaks. This test keeps the map honest in both
 * directions: what the page names exists and carries the finding's name, and every test that
 * names a finding is on the page under that finding.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const page = readFileSync(join(root, 'docs/HARDENING.md'), 'utf8');
const THIS_FILE = relative(root, fileURLToPath(import.meta.url));
const FINDINGS = 25;
const REQUIREMENT_ID = /\b(?:CE|HTTP|JSON|WH|EDU-IDEM|EDU|CARD)-(?:\d+|IN)\b/g;
// Rows that are about the proof itself (the citations, the mutation score) and name no test file.
const ROWS_WITHOUT_TESTS = [24, 25];

interface Row {
  readonly finding: number;
  /** What a title must carry to count for this row: `review #N`, or requirement IDs. */
  readonly names: readonly string[];
  readonly paths: readonly string[];
  readonly testFiles: readonly string[];
  readonly titles: readonly string[];
}

/** Backslash escapes, as in a JavaScript string literal or in Markdown: `\"` is `"`, `\\` is `\`. */
const unescape = (text: string): string => text.replace(/\\(.)/g, '$1');

/** Backticked repository paths: no spaces, and a folder or a file extension to tell them from code. */
const pathsIn = (cell: string): string[] =>
  [...cell.matchAll(/`([^`\s]+)`/g)]
    .map((m) => m[1]!)
    .filter((text) => /^[a-z]/.test(text) && (text.includes('/') || /\.(?:ts|json|md)$/.test(text)));

const rows: Row[] = page
  .split('\n')
  .filter((line) => /^\|\s*\d+\s*\|/.test(line))
  .map((line) => {
    const cells = line.split('|').map((cell) => cell.trim());
    const [finding, , , code, carry, tests] = cells.slice(1);
    const names = [
      ...[...(carry ?? '').matchAll(/review #(\d+)/g)].map((m) => `review #${m[1]}`),
      ...((carry ?? '').match(REQUIREMENT_ID) ?? []),
    ];
    const testPaths = pathsIn(tests ?? '');
    return {
      finding: Number(finding),
      names,
      paths: [...pathsIn(code ?? ''), ...testPaths],
      testFiles: testPaths.filter((path) => path.startsWith('test/') && path.endsWith('.ts')),
      titles: [...(tests ?? '').matchAll(/"((?:\\.|[^"\\])*)"/g)].map((m) => unescape(m[1]!)),
    };
  });
const rowOf = new Map(rows.map((row) => [row.finding, row]));

/**
 * The titles of the tests and describe blocks in a test source, unescaped: `it(…)`, `test(…)`,
 * `describe(…)` with any modifiers, `it.each([...])('title')`, and the title strings that open
 * the rows of an `.each` table.
 */
function titlesIn(source: string): string[] {
  const literal = String.raw`(['"\x60])((?:\\.|(?!\1)[^\\])*)\1`;
  const patterns = [
    new RegExp(String.raw`(?<![.\w])(?:it|test|describe)(?:\.\w+)*(?:\([^)]*\))?\(\s*${literal}`, 'g'),
    new RegExp(String.raw`\](?:\s*as\s+const)?\s*\)\(\s*${literal}`, 'g'),
    ...(source.includes('.each(') ? [new RegExp(String.raw`\[\s*${literal}\s*,`, 'g')] : []),
  ];
  // Keyed by where the literal ends, so a title two patterns both find counts once.
  const found = new Map<number, string>();
  for (const pattern of patterns)
    for (const m of source.matchAll(pattern)) found.set(m.index + m[0].length, unescape(m[2]!));
  return [...found.entries()].sort(([a], [b]) => a - b).map(([, title]) => title);
}

/** The findings a title names: `review #3`, `review #3, #11`, `review #11/#12`. */
function findingsNamedBy(title: string): number[] {
  return [...title.matchAll(/review\s+(#\d+(?:\s*[,/]\s*#\d+)*)/g)].flatMap((m) =>
    [...m[1]!.matchAll(/\d+/g)].map((n) => Number(n[0])),
  );
}

const carries = (title: string, name: string): boolean =>
  name.startsWith('review #')
    ? findingsNamedBy(title).includes(Number(name.slice('review #'.length)))
    : new RegExp(`\\b${name}\\b`).test(title);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

const titlesOf = new Map<string, string[]>();
const titles = (file: string): string[] => {
  if (!titlesOf.has(file))
    titlesOf.set(file, existsSync(join(root, file)) ? titlesIn(readFileSync(join(root, file), 'utf8')) : []);
  return titlesOf.get(file)!;
};

describe('docs/HARDENING.md', () => {
  it('has exactly one row for each finding 1–25 of the review, in order', () => {
    expect(rows.map((row) => row.finding)).toEqual(Array.from({ length: FINDINGS }, (_, i) => i + 1));
  });

  it('says for each row with tests what their titles carry: its own review #N, or requirement IDs', () => {
    const unnamed = rows
      .filter((row) => !ROWS_WITHOUT_TESTS.includes(row.finding))
      .filter(
        (row) =>
          row.names.length === 0 ||
          row.names.some((name) => name.startsWith('review #') && name !== `review #${row.finding}`),
      )
      .map((row) => row.finding);
    expect(unnamed).toEqual([]);
  });

  it('names only files and folders that exist', () => {
    const missing = rows.flatMap((row) =>
      row.paths.filter((path) => !existsSync(join(root, path))).map((path) => `#${row.finding}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('cites test files for every finding but the two about the proof itself (24, 25)', () => {
    expect(rows.filter((row) => row.testFiles.length === 0).map((row) => row.finding)).toEqual(ROWS_WITHOUT_TESTS);
  });

  it('cites for each finding only test files with a test whose title carries what the row says', () => {
    const unproven = rows.flatMap((row) =>
      row.testFiles
        .filter((file) => !titles(file).some((title) => row.names.some((name) => carries(title, name))))
        .map((file) => `#${row.finding}: ${file}`),
    );
    expect(unproven).toEqual([]);
  });

  it('quotes only test titles that are in the test files of their row, word for word', () => {
    const unknown = rows.flatMap((row) =>
      row.testFiles.length === 0
        ? []
        : row.titles
            .filter((quoted) => !row.testFiles.some((file) => titles(file).includes(quoted)))
            .map((quoted) => `#${row.finding}: ${quoted}`),
    );
    expect(unknown).toEqual([]);
  });

  it('cites, under finding N, every test file in test/ whose titles name review #N (no unmapped test, no drift)', () => {
    const unmapped = new Set<string>();
    // This file's own fixtures are test sources in strings, not tests.
    for (const file of sourceFiles(join(root, 'test')).filter((path) => path !== THIS_FILE)) {
      for (const title of titles(file)) {
        for (const finding of findingsNamedBy(title)) {
          if (!rowOf.get(finding)?.testFiles.includes(file))
            unmapped.add(`#${finding}: ${file} (${title.slice(0, 80)})`);
        }
      }
    }
    expect([...unmapped]).toEqual([]);
  });
});

describe('the map check itself', () => {
  it('reads the titles of it/test/describe calls, it.each titles and .each table rows, and nothing else', () => {
    const source = [
      "describe('review #3, #11: a block', () => {",
      "  it('review #7: names \\'quoted\\'', () => {});",
      '  it.each([',
      "    ['review #8: a table row', 1],",
      "  ] as const)('WH-3: a case with %s', () => {});",
      "  const note = 'review #9: a plain string, no title';",
      "  expect(/x/.test('review #10: not a title either')).toBe(false);",
      '});',
    ].join('\n');
    expect(titlesIn(source)).toEqual([
      'review #3, #11: a block',
      "review #7: names 'quoted'",
      'review #8: a table row',
      'WH-3: a case with %s',
    ]);
  });

  it('finds every finding a title names, in lists with commas or slashes, and no other number', () => {
    expect(findingsNamedBy('review #3, #11: 10,000 invalid ce- headers')).toEqual([3, 11]);
    expect(findingsNamedBy('review #11/#12: a few thousand requests')).toEqual([11, 12]);
    expect(findingsNamedBy('EDU-4, review #1: a client claim, 401')).toEqual([1]);
    expect(findingsNamedBy('EDU-19: no review here, #2 is not one')).toEqual([]);
  });

  it('tells finding 1 from finding 12, and a requirement ID from a longer one', () => {
    expect(carries('review #12: header lines', 'review #1')).toBe(false);
    expect(carries('review #3, #12: header lines', 'review #12')).toBe(true);
    expect(carries('WH-30: another requirement', 'WH-3')).toBe(false);
    expect(carries('WH-3, EDU-4: suspended', 'WH-3')).toBe(true);
  });
});
