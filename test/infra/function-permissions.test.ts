/**
 * Permissions (issue 27 §2): every AWS operation each function performed in the e2e suite, as the
 * emulated project recorded it (test/support/aws-operations-recorder.ts, mapped to IAM actions and
 * resources by test/support/aws-operations.ts), must be granted to that function's role in the
 * synthesized template — with the event source mappings' receives and deletes and the KMS key of
 * any SSE-KMS queue or bucket it uses (test/infra/function-permissions-check.ts). A call the role
 * would not be allowed fails the test, as it would fail with AccessDenied on AWS; a grant no call
 * needed is listed (least privilege), here and in test-artifacts/function-permissions.txt.
 *
 * It runs in the `permissions` project, after the emulated project (vitest.config.ts,
 * `sequence.groupOrder`), and reads the record that project wrote. Without a record (only this
 * project run, on a fresh clone) it skips and says why; in a run whose emulated project recorded
 * (`npm test`), a missing record fails it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/koerier-stack.js';
import { readRun } from '../support/aws-operations-global.js';
import {
  AWS_OPERATIONS_RUN_ENV,
  RECORD_AWS_OPERATIONS_ENV,
  type AwsOperationRecord,
} from '../support/aws-operations-recorder.js';
import {
  checkFunctionPermissions,
  describeArn,
  describeGrant,
  describeNeed,
  type PermissionCheck,
} from './function-permissions-check.js';
import { synthKoerier } from './synth.js';

const directory = resolve(
  process.env[RECORD_AWS_OPERATIONS_ENV] ?? join(REPO_ROOT, 'test-artifacts', 'aws-operations'),
);
const REPORT = join(REPO_ROOT, 'test-artifacts', 'function-permissions.txt');
/** Set when this run's emulated project records (test/support/aws-operations-global.ts): then its record is the one to read. */
const thisRun = process.env[AWS_OPERATIONS_RUN_ENV];

interface RecordOfRun {
  readonly folder: string;
  readonly records: AwsOperationRecord[];
  readonly files: number;
  readonly startedAt?: string;
}

/** This run's record, or else the newest one there is. */
function readRecord(): RecordOfRun | undefined {
  if (!existsSync(directory)) return undefined;
  const runs = readdirSync(directory)
    .map((name) => ({ name, run: readRun(join(directory, name)) }))
    .filter((entry) => entry.run !== undefined)
    .sort((a, b) => a.run!.startedAt.localeCompare(b.run!.startedAt));
  const chosen = thisRun === undefined ? runs.at(-1) : runs.find((entry) => entry.name === thisRun);
  if (!chosen) return undefined;
  const folder = join(directory, chosen.name);
  const files = readdirSync(folder).filter((name) => /^operations-.*\.jsonl$/.test(name));
  const records = files.flatMap((name) =>
    readFileSync(join(folder, name), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AwsOperationRecord),
  );
  return { folder, records, files: files.length, startedAt: chosen.run!.startedAt };
}

function report(check: PermissionCheck, record: RecordOfRun): string {
  const section = (title: string, lines: readonly string[]) => [
    `${title} (${lines.length})`,
    ...lines.map((line) => `  ${line}`),
    '',
  ];
  const calls = [...check.needs.values()].flatMap((needed) =>
    needed.map((wanted) => `${describeGrant(wanted)}  ← ${wanted.because.join(', ')}`),
  );
  return [
    `Function permissions against the record of ${record.records.length} distinct calls from ${record.files} test processes` +
      ` (run started ${record.startedAt}), ${relative(REPO_ROOT, record.folder)}`,
    '',
    ...section('Missing: needed and not granted (AccessDenied on AWS)', check.missing.map(describeNeed)),
    ...section('Unused: granted, and no recorded call needed it (least privilege)', unusedByResource(check.unused)),
    ...section(
      'Not judged: services the functions do not reach through the recorded SDK clients',
      check.notJudged.map(describeGrant),
    ),
    ...section('Functions with no recorded call', check.unrecordedFunctions),
    ...section('Needed, per function', calls),
  ].join('\n');
}

/** `payloads: dynamodb table/koerier-idempotency: BatchGetItem, DescribeTable, Scan`, one line per function and resource. */
function unusedByResource(unused: PermissionCheck['unused']): string[] {
  const lines = new Map<string, string[]>();
  for (const grant of unused) {
    const key = `${grant.function}: ${describeArn(grant.resource)}`;
    lines.set(key, [...(lines.get(key) ?? []), grant.action]);
  }
  return [...lines].map(
    ([key, actions]) => `${key}: ${actions.map((action) => action.slice(action.indexOf(':') + 1)).join(', ')}`,
  );
}

describe('function permissions (issue 27 §2)', () => {
  it("CARD-2: each function's role in the synthesized template grants every AWS operation the function performed in the e2e suite, its event source mapping's and its SSE-KMS keys'; unused grants are listed", (context) => {
    const record = readRecord();
    if (!record || record.records.length === 0) {
      if (thisRun !== undefined) {
        throw new Error(
          `The emulated project ran in this run and should have recorded its functions' AWS calls in ${join(directory, thisRun)}, but nothing is there: ` +
            'the recorder (test/support/aws-operations-recorder.ts) is not attached to the hosts.',
        );
      }
      const reason =
        `no record of the functions' AWS calls in ${relative(REPO_ROOT, directory)}: it is written by the emulated project ` +
        '(npm test, or npx vitest run --project emulated, then npx vitest run --project permissions)';
      // Said where a reader of the run sees it: the default reporter shows no skip note.
      console.warn(`Skipped: ${reason}`);
      return context.skip(reason);
    }

    const check = checkFunctionPermissions(synthKoerier(), record.records);
    const text = report(check, record);
    mkdirSync(join(REPO_ROOT, 'test-artifacts'), { recursive: true });
    writeFileSync(REPORT, `${text}\n`);
    // The missing and unused grants; the rest (what was not judged, what each function needed) is in the report file.
    console.info(`${text.split('\nNot judged')[0]}Full report: ${relative(REPO_ROOT, REPORT)}`);

    expect(check.unknownFunctions, 'the record names functions functions/config/resources.ts does not have').toEqual(
      [],
    );
    expect(
      check.unmapped.map((call) => `${call.function}: ${call.service}:${call.operation}`),
      'calls with no IAM mapping: add them to test/support/aws-operations.ts',
    ).toEqual([]);
    expect(
      check.missing.map(describeNeed),
      `granted to no role that needs it (AccessDenied on AWS); full report: ${relative(REPO_ROOT, REPORT)}`,
    ).toEqual([]);
  });
});
