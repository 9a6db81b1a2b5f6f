/**
 * The events `koerier send` reads: files, every `*.json` file of a folder (in name order), or
 * stdin. A file holds one event (a JSON object, sent as its very bytes in structured mode), a
 * batch (a JSON array), or JSON Lines (one event per line).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { text } from 'node:stream/consumers';
import { CliError, exitCodes } from './exit-codes.js';

export interface InputEvent {
  /** Where it came from, for the summary: `file.json`, `batch.json[3]`, `stdin[0]`. */
  readonly origin: string;
  /** The event's JSON text. */
  readonly json: string;
  readonly id: string | undefined;
  readonly source: string | undefined;
}

export async function readEvents(paths: readonly string[]): Promise<InputEvent[]> {
  if (paths.length === 0 || (paths.length === 1 && paths[0] === '-')) {
    // Nothing given and nothing piped: waiting for a terminal to type JSON would look like a hang.
    if (paths.length === 0 && process.stdin.isTTY)
      throw new CliError('give event files or folders, or pipe events into koerier send -', exitCodes.usage);
    return eventsOf('stdin', await text(process.stdin));
  }
  const events: InputEvent[] = [];
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch {
      throw new CliError(`no such file or folder: ${path}`, exitCodes.usage);
    }
    if (info.isDirectory()) {
      const names = (await readdir(path))
        .filter((name) => name.endsWith('.json'))
        .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
      for (const name of names) events.push(...eventsOf(name, await readFile(join(path, name), 'utf8')));
    } else {
      events.push(...eventsOf(basename(path), await readFile(path, 'utf8')));
    }
  }
  return events;
}

export function eventsOf(origin: string, content: string): InputEvent[] {
  const trimmed = content.trim();
  if (!trimmed) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    // Not one JSON document: JSON Lines, one event per line.
    const lines = trimmed.split(/\r?\n/).filter((line) => line.trim());
    return lines.map((line, index) => {
      try {
        return inputEvent(`${origin}:${index + 1}`, line.trim(), JSON.parse(line) as unknown);
      } catch {
        throw new CliError(`${origin} line ${index + 1} is not JSON`, exitCodes.usage);
      }
    });
  }
  if (Array.isArray(parsed))
    return parsed.map((member, index) => inputEvent(`${origin}[${index}]`, JSON.stringify(member), member));
  return [inputEvent(origin, trimmed, parsed)];
}

function inputEvent(origin: string, json: string, value: unknown): InputEvent {
  const record = value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  return {
    origin,
    json,
    id: typeof record['id'] === 'string' ? record['id'] : undefined,
    source: typeof record['source'] === 'string' ? record['source'] : undefined,
  };
}
