/**
 * Every case of the public CloudEvents conformance data (../shared/testdata, loaded by
 * test/support/conformance-cases.ts) through parseCloudEventsRequest. The upstream expectation is
 * that of a core CloudEvents 1.0 receiver; where Koerier's NL GOV profile expects otherwise, the
 * case is listed in KOERIER_DIFFERS (test/support/conformance-cases.ts) with the requirement that makes the difference.
 */
import { describe, expect, it } from 'vitest';
import { toBinaryMessage } from '../../../functions/core/cloudevents/index.js';
import {
  conformanceAvailable,
  conformanceCases,
  conformanceRoot,
  featureCases,
  jsonFormatCases,
  KOERIER_DIFFERS,
  yamlCases,
  type ConformanceCase,
} from '../../support/conformance-cases.js';
import { acceptedEvents, parse, problemOf, summary } from './fixtures.js';

if (!conformanceAvailable) {
  console.warn(
    `CloudEvents conformance data not found at ${conformanceRoot} (../shared/testdata is absent next to the repository); the conformance cases are skipped.`,
  );
}

/** The requirement an upstream invalid case breaks, so each rejection is for the right reason. */
const REJECTED_FOR: Readonly<Record<string, string>> = {
  invalidNoSpecVersion: 'CE-5',
  invalidNoId: 'CE-3',
  invalidNoType: 'CE-6',
  invalidNoSource: 'CE-4',
  invalidTimeGarbage: 'CE-10',
  invalidTimeToMinute: 'CE-10',
  invalidTimeOffsetX: 'CE-10',
  invalidTimeOffsetOutOfRange: 'CE-10',
  invalidTimeOffsetNonInteger: 'CE-10',
  invalidTimeOffsetHourOnly: 'CE-10',
  invalidEmptyId: 'CE-3',
  invalidEmptyType: 'CE-6',
  invalidEmptySource: 'CE-4',
  invalidEmptySpecVersion: 'CE-5',
  invalidUnknownSpecVersion: 'CE-5',
  invalidNonRfc2046DataContentType: 'CE-7',
  invalidEmptyDataContentType: 'CE-7',
  invalidEmptyDataSchema: 'CE-8',
  invalidEmptySubject: 'CE-9',
  invalidNumericId: 'CE-3',
  invalidObjectId: 'CE-3',
  invalidCapitalizedExtension: 'CE-1',
  invalidPunctuatedExtension: 'CE-1',
  invalidNonIntegerExtensionValue: 'CE-2',
  invalidBothDataAndDataBase64: 'JSON-2',
  invalidBatchMixedSpecVersions: 'HTTP-3',
  invalidBatchContainingInvalidCloudEvent: 'CE-3',
  invalidBatchContainingNonObject: 'HTTP-3',
};

/**
 * The "golden" sample events of format/README.md, in code as that README asks. One deviation:
 * the README's prose gives simpleTextData the id "simpleData", while valid-events.json of the
 * same commit sends "simpleTextData"; the test file is followed.
 */
const MINIMAL = { specversion: '1.0', id: 'minimal', type: 'io.cloudevents.test', source: 'https://cloudevents.io' };
const GOLDEN_EVENTS: Readonly<Record<string, { attributes: Record<string, unknown>; data?: unknown }>> = {
  minimal: { attributes: MINIMAL },
  minimalWithTime: { attributes: { ...MINIMAL, id: 'minimalWithTime', time: '2018-04-05T17:31:00Z' } },
  minimalWithRelativeSource: { attributes: { ...MINIMAL, id: 'minimalWithRelativeSource', source: '#fragment' } },
  allCore: {
    attributes: {
      ...MINIMAL,
      id: 'allCore',
      datacontenttype: 'text/plain',
      dataschema: 'https://cloudevents.io/dataschema',
      subject: 'tests',
      time: '2018-04-05T17:31:00Z',
    },
  },
  simpleTextData: {
    attributes: { ...MINIMAL, id: 'simpleTextData', datacontenttype: 'text/plain' },
    data: 'Simple text',
  },
  allExtensionTypes: {
    attributes: {
      ...MINIMAL,
      id: 'allExtensionTypes',
      extinteger: 10,
      extboolean: true,
      extstring: 'text',
      extbinary: 'TWE=',
      exttimestamp: '2023-03-31T15:12:00Z',
      exturi: 'https://cloudevents.io',
      exturiref: '//authority/path',
    },
  },
};
const GOLDEN_BATCHES: Readonly<Record<string, readonly string[]>> = {
  empty: [],
  minimal: ['minimal'],
  minimal2: ['minimal', 'minimal'],
  minimalAndAllCore: ['minimal', 'allCore'],
  minimalAndAllExtensionTypes: ['minimal', 'allExtensionTypes'],
};

/** Timestamps are equal when they name the same instant (format/README.md). */
function expectSameAttributes(
  actual: Readonly<Record<string, unknown>>,
  expected: Readonly<Record<string, unknown>>,
): void {
  const { time: actualTime, ...actualRest } = actual;
  const { time: expectedTime, ...expectedRest } = expected;
  expect(actualRest).toEqual(expectedRest);
  expect(actualTime === undefined ? undefined : Date.parse(String(actualTime))).toBe(
    expectedTime === undefined ? undefined : Date.parse(String(expectedTime)),
  );
}

function expectGolden(json: string, attributes: Readonly<Record<string, unknown>>, sampleId: string): void {
  const golden = GOLDEN_EVENTS[sampleId];
  if (golden === undefined) expect.fail(`no golden sample '${sampleId}' in this test`);
  expectSameAttributes(attributes, golden.attributes);
  const stored = JSON.parse(json) as Record<string, unknown>;
  expect(stored['data'] ?? undefined).toEqual(golden.data);
  expect(stored['data_base64'] ?? undefined).toBeUndefined();
}

const MODE_REQUIREMENT = { structured: 'HTTP-1', binary: 'HTTP-2', batch: 'HTTP-3' } as const;

function title(c: ConformanceCase): string {
  const differs = KOERIER_DIFFERS[c.id];
  if (differs)
    return `${differs.requirement}: ${c.id} (${c.description}) is rejected by Koerier where core CloudEvents accepts it — ${differs.reason}`;
  const name = c.id.slice(c.id.indexOf('#') + 1);
  if (c.expected === 'reject')
    return `${REJECTED_FOR[name] ?? MODE_REQUIREMENT[c.mode]}: ${c.id} (${c.description}) is rejected`;
  return `${MODE_REQUIREMENT[c.mode]}: ${c.id} (${c.description}) is accepted`;
}

function check(c: ConformanceCase): void {
  const outcome = parse(c.request);
  const differs = KOERIER_DIFFERS[c.id];
  if (differs !== undefined || c.expected === 'reject') {
    const problem = problemOf(outcome);
    expect(problem.status).toBe(400);
    const requirement = differs?.requirement ?? REJECTED_FOR[c.id.slice(c.id.indexOf('#') + 1)];
    if (requirement !== undefined) expect(summary(problem.errors).map((s) => s.split(' ')[0])).toContain(requirement);
    return;
  }
  const events = acceptedEvents(outcome);
  expect(outcome.ok && outcome.mode).toBe(c.mode);
  expect(events).toHaveLength(c.expectedEventCount!);
  if (c.expectedAttributes !== undefined) expectSameAttributes(events[0]!.attributes, c.expectedAttributes);
  if (c.expectedData !== undefined) expect(JSON.parse(events[0]!.json).data).toEqual(c.expectedData);
  if (c.mode === 'binary') {
    // Whatever form the data took (JSON, text or base64), the delivery body is the bytes received.
    expect(toBinaryMessage(events[0]!.json).body.equals(c.request.body)).toBe(true);
  }
  if (c.sampleId !== undefined) {
    if (c.mode === 'batch') {
      const members = GOLDEN_BATCHES[c.sampleId];
      if (members === undefined) expect.fail(`no golden batch '${c.sampleId}' in this test`);
      expect(events).toHaveLength(members.length);
      members.forEach((sampleId, i) => expectGolden(events[i]!.json, events[i]!.attributes, sampleId));
    } else {
      expectGolden(events[0]!.json, events[0]!.attributes, c.sampleId);
    }
  }
}

function runAll(cases: readonly ConformanceCase[]): void {
  // sampleExtensionAttributes cases run too: Koerier keeps extension values as their JSON types.
  for (const c of cases) it(title(c), () => check(c));
}

describe.skipIf(!conformanceAvailable)('CloudEvents conformance data', () => {
  it('HTTP-1: the data holds cases from all three sources, none needing extension constraints (which Koerier does not define)', () => {
    expect(conformanceCases.filter((c) => c.requiresExtensionConstraints).map((c) => c.id)).toEqual([]);
    expect(jsonFormatCases.length).toBeGreaterThan(0);
    expect(yamlCases.length).toBeGreaterThan(0);
    expect(featureCases.length).toBeGreaterThan(0);
  });

  it('CE-5: every case Koerier expects otherwise exists in the data', () => {
    const ids = new Set(conformanceCases.map((c) => c.id));
    expect(Object.keys(KOERIER_DIFFERS).filter((id) => !ids.has(id))).toEqual([]);
  });

  describe('JSON event format (format/json)', () => runAll(jsonFormatCases));
  describe('YAML events as `cloudevents invoke` sends them (yaml/)', () => runAll(yamlCases));
  describe('HTTP protocol binding scenarios (features/)', () => runAll(featureCases));
});
