/**
 * The public CloudEvents conformance data (github.com/cloudevents/conformance, Apache-2.0), read
 * from `../shared/testdata/cloudevents-conformance` next to the repository — never copied into
 * it — and turned into HTTP requests with the outcome the upstream suite expects of a core
 * CloudEvents 1.0 receiver. Unit tests replay them through the parser; an end-to-end test can
 * replay the same requests over HTTP. Where the folder is absent, `conformanceAvailable` is
 * false and every list is empty.
 *
 * Three sources (see the README in that folder):
 * - `yaml/**.yaml`: the events `cloudevents invoke` sends, mapped to requests as its Go code does;
 * - `features/*.feature`: Gherkin scenarios holding a raw HTTP request and the expected result;
 * - `format/json/*.json`: JSON event format tests, sent as structured or batch requests.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Document, isMap, isNode, parseAllDocuments } from 'yaml';
import type { ContentMode } from '../../functions/core/cloudevents/index.js';

export interface ConformanceRequest {
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface ConformanceCase {
  /** Stable and unique: the file below the conformance folder, then `#` and the case within it. */
  readonly id: string;
  readonly origin: 'yaml' | 'feature' | 'json-format';
  readonly description: string;
  readonly request: ConformanceRequest;
  readonly mode: ContentMode;
  /** What the upstream suite expects of a core CloudEvents 1.0 receiver. */
  readonly expected: 'accept' | 'reject';
  /** Accepted cases: how many events the request holds. */
  readonly expectedEventCount?: number;
  /** Context attributes the upstream case states (YAML and feature cases), values as strings. */
  readonly expectedAttributes?: Readonly<Record<string, string>>;
  /** The data the upstream case states, as a JSON value (structured YAML and feature cases). */
  readonly expectedData?: unknown;
  /** JSON format cases: the "golden" sample event or batch the result must equal. */
  readonly sampleId?: string;
  /** JSON format flags: the case needs typed sample extension attributes / extension constraints. */
  readonly requiresSampleExtensionAttributes: boolean;
  readonly requiresExtensionConstraints: boolean;
}

/** Cases where Koerier's expected outcome is not the upstream one, and why. */
export const KOERIER_DIFFERS: Readonly<Record<string, { expected: 'reject'; requirement: string; reason: string }>> =
  Object.fromEntries(
    ['yaml/v03.yaml#1', ...[1, 2, 3, 4, 5, 6].map((n) => `yaml/v0.3/v03_minimum.yaml#${n}`)].map((id) => [
      id,
      { expected: 'reject', requirement: 'CE-5', reason: 'specversion 0.3: Koerier accepts CloudEvents 1.0 only' },
    ]),
  );

/** What Koerier, as an NL GOV profile receiver, does with a case. */
export function koerierExpects(c: ConformanceCase): 'accept' | 'reject' {
  return KOERIER_DIFFERS[c.id]?.expected ?? c.expected;
}

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
export const conformanceRoot = path.resolve(repositoryRoot, '../shared/testdata/cloudevents-conformance');
export const conformanceAvailable = existsSync(conformanceRoot);

const STRUCTURED_CONTENT_TYPE = 'application/cloudevents+json; charset=UTF-8';

function filesUnder(folder: string, extension: string): string[] {
  const absolute = path.join(conformanceRoot, folder);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith(extension))
    .map((file) => path.posix.join(folder, file.split(path.sep).join('/')))
    .sort();
}

function read(file: string): string {
  return readFileSync(path.join(conformanceRoot, file), 'utf8');
}

// ---------------------------------------------------------------------------------------------
// YAML events, as `cloudevents invoke` sends them (pkg/http/http.go, pkg/event/event.go):
// Mode empty or `binary` → ce-<attr> headers with trimmed values, Content-Type = datacontenttype,
// body = Data as is; `structured` → one JSON object, Content-Type application/cloudevents+json;
// charset=UTF-8, data = Data parsed as JSON. Empty values are skipped. TransportExtensions are
// plain headers. The README does not say whether structured values are trimmed; they are
// trimmed here as the tool does for headers (block scalars such as `comexampleextension2: |`
// end in a newline, which no CloudEvents String may hold).

interface YamlEvent {
  Mode?: string;
  ContextAttributes?: Record<string, unknown>;
  TransportExtensions?: Record<string, string>;
  Data?: string;
}

/** ContextAttributes keys of the Go struct and the attribute each one carries. */
const YAML_ATTRIBUTES: readonly [key: string, attribute: string][] = [
  ['specversion', 'specversion'],
  ['type', 'type'],
  ['time', 'time'],
  ['id', 'id'],
  ['source', 'source'],
  ['subject', 'subject'],
  ['schemaurl', 'schemaurl'],
  ['datacontenttype', 'datacontenttype'],
  ['dataecontentncoding', 'datacontentencoding'],
];

function yamlAttributes(context: Record<string, unknown>): Record<string, string> {
  const attributes: Record<string, string> = {};
  const add = (name: string, value: unknown): void => {
    const trimmed = typeof value === 'string' ? value.trim() : '';
    if (trimmed !== '') attributes[name] = trimmed;
  };
  for (const [key, attribute] of YAML_ATTRIBUTES) add(attribute, context[key]);
  for (const [name, value] of Object.entries((context['Extensions'] ?? {}) as Record<string, unknown>))
    add(name, value);
  return attributes;
}

function yamlCase(file: string, position: number, event: YamlEvent, comment: string | undefined): ConformanceCase {
  const attributes = yamlAttributes(event.ContextAttributes ?? {});
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.TransportExtensions ?? {})) {
    if (value.trim() !== '') headers[name.toLowerCase()] = value.trim();
  }
  const data = event.Data ?? '';
  const structured = event.Mode === 'structured';
  let body: string;
  if (structured) {
    const object: Record<string, unknown> = { ...attributes };
    if (data !== '') object['data'] = JSON.parse(data);
    headers['content-type'] = STRUCTURED_CONTENT_TYPE;
    body = JSON.stringify(object);
  } else {
    for (const [name, value] of Object.entries(attributes))
      headers[name === 'datacontenttype' ? 'content-type' : `ce-${name}`] = value;
    body = data;
  }
  return {
    id: `${file}#${position}`,
    origin: 'yaml',
    description: comment?.trim() || `${structured ? 'structured' : 'binary'} event ${attributes['id'] ?? ''}`,
    request: { headers, body: Buffer.from(body, 'utf8') },
    mode: structured ? 'structured' : 'binary',
    expected: 'accept',
    expectedEventCount: 1,
    expectedAttributes: attributes,
    ...(structured && data !== '' ? { expectedData: JSON.parse(data) as unknown } : {}),
    requiresSampleExtensionAttributes: false,
    requiresExtensionConstraints: false,
  };
}

/** The `# …` line above a document, which the parser hangs on the document, its map or its first key. */
function leadingComment(document: Document): string | undefined {
  const contents = document.contents;
  const firstKey = isMap(contents) ? contents.items[0]?.key : undefined;
  return (
    document.commentBefore ??
    contents?.commentBefore ??
    (isNode(firstKey) ? firstKey.commentBefore : undefined) ??
    undefined
  );
}

function loadYamlCases(): ConformanceCase[] {
  return filesUnder('yaml', '.yaml').flatMap((file) =>
    // The failsafe schema keeps every scalar a string (`specversion: 1.0` stays "1.0").
    parseAllDocuments(read(file), { schema: 'failsafe' }).map((document, index) =>
      yamlCase(file, index + 1, document.toJS() as YamlEvent, leadingComment(document)),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Gherkin scenarios: `Given an HTTP request` + doc string, `Then the attributes are:` + table,
// `And the data is equal to the following JSON:` + doc string, `Examples:` filling <placeholders>.

interface Scenario {
  title: string;
  request?: string;
  attributes?: Record<string, string>;
  data?: string;
  examples: Record<string, string>[];
}

function tableRow(line: string): string[] {
  return line
    .trim()
    .slice(1, -1)
    .split('|')
    .map((cell) => cell.trim());
}

function parseFeature(text: string): Scenario[] {
  const lines = text.split(/\r?\n/);
  const scenarios: Scenario[] = [];
  let current: Scenario | undefined;
  let i = 0;
  const docString = (): string => {
    while (!lines[i]!.trim().startsWith('"""')) i++;
    const indent = lines[i]!.indexOf('"""');
    const content: string[] = [];
    for (i++; !lines[i]!.trim().startsWith('"""'); i++) content.push(lines[i]!.slice(indent));
    return content.join('\n');
  };
  const table = (): string[][] => {
    const rows: string[][] = [];
    while (i + 1 < lines.length && lines[i + 1]!.trim().startsWith('|')) rows.push(tableRow(lines[++i]!));
    return rows;
  };
  for (; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const title = /^Scenario(?: Outline)?:\s*(.*)$/.exec(line);
    if (title) scenarios.push((current = { title: title[1]!, examples: [] }));
    else if (!current) continue;
    else if (line.startsWith('Given an HTTP request')) current.request = docString();
    else if (line.startsWith('Then the attributes are:')) {
      current.attributes = Object.fromEntries(
        table()
          .slice(1)
          .map(([key, value]) => [key!, value!]),
      );
    } else if (line.startsWith('And the data is equal to the following JSON:')) current.data = docString();
    else if (line.startsWith('Examples:')) {
      const [header, ...rows] = table();
      current.examples = rows.map((row) => Object.fromEntries(header!.map((name, n) => [name, row[n]!])));
    }
  }
  return scenarios;
}

/**
 * A raw HTTP/1.1 request: request line, headers, blank line, body. Content-Length and Host are
 * dropped: the doc string's indentation makes the stated length wrong, and an HTTP client sets
 * both itself when the request is replayed.
 */
function httpRequest(raw: string): ConformanceRequest {
  const lines = raw.split('\n');
  const headers: Record<string, string> = {};
  let n = 1;
  for (; n < lines.length && lines[n]!.trim() !== ''; n++) {
    const colon = lines[n]!.indexOf(':');
    const name = lines[n]!.slice(0, colon).trim().toLowerCase();
    if (name !== 'content-length' && name !== 'host') headers[name] = lines[n]!.slice(colon + 1).trim();
  }
  return { headers, body: Buffer.from(lines.slice(n + 1).join('\n'), 'utf8') };
}

function loadFeatureCases(): ConformanceCase[] {
  return filesUnder('features', '.feature').flatMap((file) =>
    parseFeature(read(file)).flatMap((scenario) => {
      const fill = (s: string, example: Record<string, string>): string =>
        s.replace(/<([^<>]+)>/g, (whole, name: string) => example[name] ?? whole);
      return (scenario.examples.length > 0 ? scenario.examples : [{}]).map((example): ConformanceCase => {
        const title = fill(scenario.title, example);
        const request = httpRequest(fill(scenario.request ?? '', example));
        return {
          id: `${file}#${title}`,
          origin: 'feature',
          description: title,
          request,
          mode: (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/cloudevents')
            ? 'structured'
            : 'binary',
          expected: 'accept',
          expectedEventCount: 1,
          ...(scenario.attributes
            ? {
                expectedAttributes: Object.fromEntries(
                  Object.entries(scenario.attributes).map(([k, v]) => [k, fill(v, example)]),
                ),
              }
            : {}),
          ...(scenario.data === undefined ? {} : { expectedData: JSON.parse(scenario.data) as unknown }),
          requiresSampleExtensionAttributes: false,
          requiresExtensionConstraints: false,
        };
      });
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// JSON event format tests: `{testType, tests: [{id, sampleId?, testType?, description?, event |
// batch, sampleExtensionAttributes?, extensionConstraints?}]}`.

type JsonTestType = 'ValidSingleEvent' | 'InvalidSingleEvent' | 'ValidBatch' | 'InvalidBatch';

interface JsonFormatFile {
  testType: JsonTestType;
  tests: {
    id: string;
    testType?: JsonTestType;
    sampleId?: string;
    description?: string;
    event?: unknown;
    batch?: unknown;
    sampleExtensionAttributes?: boolean;
    extensionConstraints?: boolean;
  }[];
}

function loadJsonFormatCases(): ConformanceCase[] {
  return filesUnder('format/json', '.json').flatMap((file) => {
    const suite = JSON.parse(read(file)) as JsonFormatFile;
    return suite.tests.map((test): ConformanceCase => {
      const testType = test.testType ?? suite.testType;
      const batch = testType === 'ValidBatch' || testType === 'InvalidBatch';
      const valid = testType === 'ValidSingleEvent' || testType === 'ValidBatch';
      const payload = batch ? test.batch : test.event;
      return {
        id: `${file}#${test.id}`,
        origin: 'json-format',
        description: test.description ?? test.id,
        request: {
          headers: { 'content-type': batch ? 'application/cloudevents-batch+json' : 'application/cloudevents+json' },
          body: Buffer.from(JSON.stringify(payload), 'utf8'),
        },
        mode: batch ? 'batch' : 'structured',
        expected: valid ? 'accept' : 'reject',
        ...(valid ? { expectedEventCount: batch ? (payload as unknown[]).length : 1 } : {}),
        ...(test.sampleId === undefined ? {} : { sampleId: test.sampleId }),
        requiresSampleExtensionAttributes: test.sampleExtensionAttributes === true,
        requiresExtensionConstraints: test.extensionConstraints === true,
      };
    });
  });
}

export const yamlCases: readonly ConformanceCase[] = conformanceAvailable ? loadYamlCases() : [];
export const featureCases: readonly ConformanceCase[] = conformanceAvailable ? loadFeatureCases() : [];
export const jsonFormatCases: readonly ConformanceCase[] = conformanceAvailable ? loadJsonFormatCases() : [];
export const conformanceCases: readonly ConformanceCase[] = [...jsonFormatCases, ...yamlCases, ...featureCases];
