/**
 * How the CLI shows results: tables for people (cli-table3), JSON for scripts (`--json`, one
 * document on stdout), progress bars on stderr (cli-progress) so they never mix with the data.
 */
import { SingleBar, Presets } from 'cli-progress';
import Table from 'cli-table3';
import type { Command } from 'commander';
import { KoerierClient } from './api-client.js';
import { resolveSettings, gatewayUrl, type GlobalOptions, type Settings } from './settings.js';
import { cachedTokens } from './tokens.js';

export interface Context {
  readonly settings: Settings;
  readonly client: KoerierClient;
  readonly json: boolean;
}

/** The settings and an authenticated client for a command's action. */
export async function contextOf(command: Command): Promise<Context> {
  const settings = await resolveSettings(command.optsWithGlobals<GlobalOptions>());
  const client = new KoerierClient(gatewayUrl(settings), cachedTokens(settings), settings.retries);
  return { settings, client, json: settings.json };
}

/**
 * What a gateway answers is other tenants' text too (a contract's owner, a description): shown to
 * a terminal, an ESC or CSI in it would be run as a command (issue 28, item 14). In tables each
 * control character but tab and line feed, and each bidirectional override, is shown escaped
 * (`\u001b`); JSON escapes C0 itself, and DEL, C1 and the overrides here, still valid JSON.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE_FOR_TERMINALS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string, unsafe: RegExp = UNSAFE_FOR_TERMINALS): string {
  return text.replace(unsafe, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${terminalSafe(JSON.stringify(value, null, 2), UNSAFE_IN_JSON)}\n`);
}

export function printTable(head: readonly string[], rows: readonly (readonly unknown[])[]): void {
  const header = head.map((name) => terminalSafe(name));
  const cells = rows.map((row) => row.map(cell));
  const width = tableWidth();
  const widths = width === undefined ? undefined : columnWidths([header, ...cells], width);
  const table = new Table({
    head: header,
    style: { head: [], border: [] },
    wordWrap: true,
    ...(widths ? { colWidths: widths } : {}),
  });
  for (const row of cells) table.push(row);
  process.stdout.write(`${table.toString()}\n`);
}

/**
 * The width a table must fit: the terminal's, or `COLUMNS` where the output is not a terminal (as
 * `ls` reads it). Neither: a pipe or a file, where wrapped cells would only hinder `grep`.
 */
function tableWidth(): number | undefined {
  const columns = process.stdout.isTTY ? process.stdout.columns : Number(process.env['COLUMNS']);
  return columns && columns >= 40 ? columns : undefined;
}

/** No column is narrowed below this (its content wraps instead), unless it is narrower anyway. */
const MIN_COLUMN = 8;

/**
 * Nor below its longest word up to this length: an id, a URL or a date cut across two lines can
 * no longer be copied, so the table stays wider than asked rather than break one.
 */
const UNBROKEN_WORD = 48;

/**
 * Column widths (padding included) that make the table fit `width` characters (issue 30 item 5),
 * or nothing when it fits as it is: the widest columns give way first, one character at a time,
 * so short columns (status, attempt) keep their width and long ones (errors, answers) wrap between
 * words. A table of many ids may stay wider than `width`.
 */
export function columnWidths(rows: readonly (readonly string[])[], width: number): number[] | undefined {
  const count = Math.max(0, ...rows.map((row) => row.length));
  const natural = Array.from(
    { length: count },
    (_, i) => 2 + Math.max(1, ...rows.map((row) => Math.max(0, ...(row[i] ?? '').split('\n').map((l) => l.length)))),
  );
  const borders = count + 1;
  let excess = natural.reduce((sum, w) => sum + w, 0) + borders - width;
  if (excess <= 0) return undefined;
  const longestWord = Array.from({ length: count }, (_, i) =>
    Math.max(0, ...rows.flatMap((row) => (row[i] ?? '').split(/\s+/).map((word) => word.length))),
  );
  const least = natural.map((w, i) => Math.min(w, 2 + Math.max(MIN_COLUMN, Math.min(longestWord[i]!, UNBROKEN_WORD))));
  const widths = [...natural];
  while (excess > 0) {
    let widest = -1;
    for (let i = 0; i < count; i++)
      if (widths[i]! > least[i]! && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    if (widest < 0) break;
    widths[widest]! -= 1;
    excess -= 1;
  }
  return widths;
}

/** Name/value lines of one object, for `show` commands. */
export function printRecord(record: Record<string, unknown>): void {
  const table = new Table({ style: { head: [], border: [] }, wordWrap: true });
  for (const [name, value] of Object.entries(record)) table.push({ [terminalSafe(name)]: cell(value) });
  process.stdout.write(`${table.toString()}\n`);
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return terminalSafe(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return terminalSafe(JSON.stringify(value), UNSAFE_IN_JSON);
}

export type ProgressChoice = boolean | undefined;

export interface Progress {
  increment(by?: number): void;
  stop(): void;
}

/**
 * A progress bar on stderr: shown when asked (`--progress`), or by default when stderr is a
 * terminal and there is enough work to watch (`atLeast` items). Off with `--no-progress` or `--json`.
 */
export function progress(total: number, label: string, choice: ProgressChoice, json: boolean, atLeast = 20): Progress {
  const wanted = choice ?? (!json && process.stderr.isTTY === true && total >= atLeast);
  if (!wanted) return { increment: () => undefined, stop: () => undefined };
  const bar = new SingleBar(
    {
      format: `${label} [{bar}] {value}/{total} {percentage}% | {duration}s`,
      stream: process.stderr,
      noTTYOutput: true,
      notTTYSchedule: 1000,
      hideCursor: process.stderr.isTTY === true,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    increment: (by = 1) => bar.increment(by),
    stop: () => bar.stop(),
  };
}
