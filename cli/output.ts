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

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable(head: readonly string[], rows: readonly (readonly unknown[])[]): void {
  const table = new Table({ head: [...head], style: { head: [], border: [] }, wordWrap: true });
  for (const row of rows) table.push(row.map(cell));
  process.stdout.write(`${table.toString()}\n`);
}

/** Name/value lines of one object, for `show` commands. */
export function printRecord(record: Record<string, unknown>): void {
  const table = new Table({ style: { head: [], border: [] }, wordWrap: true });
  for (const [name, value] of Object.entries(record)) table.push({ [name]: cell(value) });
  process.stdout.write(`${table.toString()}\n`);
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
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
