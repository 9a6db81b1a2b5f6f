/**
 * The CESQL v1 Technology Compatibility Kit (cloudevents/spec `cesql/cesql_tck/*.yaml`,
 * Apache-2.0), read from `../shared/testdata/cesql-tck` next to the repository — public data is
 * never copied into it — or from the folder `KOERIER_CESQL_TCK` names. Where neither exists,
 * `cesqlTckAvailable` is false and `cesqlTckCases()` is empty.
 *
 * A case (the TCK's README): `expression`; `result` (boolean, integer or string) and/or `error`
 * (parse, math, cast, missingAttribute, missingFunction, functionEvaluation, generic); `event`, a
 * whole event, or `eventOverrides` laid over any valid event.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const cesqlTckRoot =
  process.env['KOERIER_CESQL_TCK'] ?? path.resolve(repositoryRoot, '../shared/testdata/cesql-tck');
export const cesqlTckAvailable = existsSync(cesqlTckRoot);

export interface CesqlTckCase {
  /** `<file>: <case name>`. */
  readonly title: string;
  readonly file: string;
  readonly expression: string;
  readonly result?: boolean | number | string;
  readonly error?: string;
  readonly event: Record<string, string | number | boolean>;
}

/** Any valid event, for cases that name only overrides (the TCK leaves the values open). */
const ANY_EVENT = { specversion: '1.0', id: 'tck-1', source: '/koerier/tck', type: 'nl.koerier.tck.v1' };

interface TckFile {
  readonly name: string;
  readonly tests: ReadonlyArray<{
    name: string;
    expression: string | number | boolean;
    result?: boolean | number | string;
    error?: string;
    event?: Record<string, string | number | boolean>;
    eventOverrides?: Record<string, string | number | boolean>;
  }>;
}

export function cesqlTckCases(): CesqlTckCase[] {
  if (!cesqlTckAvailable) return [];
  const files = readdirSync(cesqlTckRoot)
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  return files.flatMap((file) => {
    const suite = parse(readFileSync(path.join(cesqlTckRoot, file), 'utf8')) as TckFile;
    return suite.tests.map((test) => ({
      title: `${file}: ${test.name}`,
      file,
      expression: String(test.expression),
      ...(test.result === undefined ? {} : { result: test.result }),
      ...(test.error === undefined ? {} : { error: test.error }),
      event: test.event ?? { ...ANY_EVENT, ...test.eventOverrides },
    }));
  });
}
