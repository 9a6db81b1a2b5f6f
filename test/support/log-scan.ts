/**
 * The log scan of the whole test suite (issue 13: "no log line contains `data` or a secret"). Every
 * test process tees every line any Koerier logger writes — captured by a test or not — to a file of
 * its own under one directory per run (test/support/log-scan-setup.ts), and the helpers that make
 * secrets (the laptop host's client secrets, the receivers' client secrets and tokens) note them
 * there too. After all projects, test/support/log-scan-global.ts reads it all and fails the run on
 * any finding of `findLeaks`.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

/** Set by the global setup for every test process of the run. */
export const LOG_SCAN_DIR_ENV = 'KOERIER_TEST_LOG_SCAN_DIR';

/** Shapes that are secrets wherever they appear, whoever made them. */
const SECRET_SHAPES: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  { name: 'a JWT (access token)', pattern: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { name: 'a bearer credential', pattern: /Bearer [A-Za-z0-9._~+/-]{16,}/ },
  { name: 'a private key', pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
  // An event's JSON text inside a field: its `data` member, escaped as part of a string value.
  { name: "an event's data inside a string", pattern: /\\"data(_base64)?\\"\s*:/ },
];

export interface Leak {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

/**
 * What in `lines` must not be in a log: a test secret (exact, at least 8 characters), a secret's
 * shape, or a field named `data` or `data_base64` at any depth whose value is not `[redacted]`.
 */
export function findLeaks(lines: readonly string[], secrets: readonly string[], file = 'log'): Leak[] {
  const leaks: Leak[] = [];
  const known = [...new Set(secrets)].filter((secret) => secret.length >= 8);
  lines.forEach((text, index) => {
    const at = { file, line: index + 1 };
    for (const secret of known)
      if (text.includes(secret)) leaks.push({ ...at, what: `a test secret (${secret.slice(0, 3)}…)` });
    for (const { name, pattern } of SECRET_SHAPES) if (pattern.test(text)) leaks.push({ ...at, what: name });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    const field = dataField(parsed);
    if (field) leaks.push({ ...at, what: `a field "${field}" with a value` });
  });
  return leaks;
}

function dataField(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.map(dataField).find(Boolean);
  if (!value || typeof value !== 'object') return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if ((key === 'data' || key === 'data_base64') && inner !== '[redacted]') return key;
    const nested = dataField(inner);
    if (nested) return nested;
  }
  return undefined;
}

/** Adds a line some other log of the test writes (the laptop host's gateway and pollers) to the scan. */
export function noteLogLine(line: string): void {
  const dir = process.env[LOG_SCAN_DIR_ENV];
  if (dir) appendFileSync(join(dir, `log-host-${process.pid}.jsonl`), `${line}\n`);
}

/** Notes a secret a test helper made, for the scan at the end of the run (no-op outside a scanned run). */
export function noteTestSecret(...secrets: string[]): void {
  const dir = process.env[LOG_SCAN_DIR_ENV];
  if (!dir) return;
  appendFileSync(join(dir, `secrets-${process.pid}.txt`), secrets.map((secret) => `${secret}\n`).join(''));
}
