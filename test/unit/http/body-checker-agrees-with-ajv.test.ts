/**
 * The request bodies are checked by TypeBox's checker (functions/core/http/json-body.ts, issue 29
 * item 2); here it must agree with Ajv, a full JSON Schema 2020-12 validator, on every body schema
 * for many values, so that what /openapi.json says a body may be is what Koerier takes.
 *
 * With one difference, stated rather than hidden: TypeBox counts a string's length in UTF-16 code
 * units, JSON Schema (and Ajv as the project configures it) in code points, so a string of astral
 * characters (emoji) is refused at half the length the description allows. Every disagreement must
 * be that one: Ajv told to count UTF-16 units (`unicode: false`) then agrees.
 */
import { Check } from '@sinclair/typebox/value';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { componentBodies, operationBodies } from '../../../functions/core/api-description/request-bodies.js';
import { describedSchema, schemaIssues, type RequestBody } from '../../../functions/core/http/json-body.js';
import { STRING_FORMATS } from '../../../functions/core/http/string-formats.js';

const TOKEN = 'sha-256=:' + 'A'.repeat(43) + '=:';
const CLIENT = {
  description: 'School B',
  publishGrants: ['urn:nld:oin:0002'],
  entitlements: [{ typePrefix: 'nl.edu.' }],
  quotas: { maxPullSubscriptions: 3 },
};
/** Bodies each schema takes (one per form), to vary member by member. */
const VALID: Readonly<Record<string, Record<string, unknown> | Record<string, unknown>[]>> = {
  receiveEvents: { maxevents: 10 },
  acknowledgeEvents: { locktokens: ['t'] },
  releaseEvents: { locktokens: ['t'], delayseconds: 5 },
  renewEventLocks: { locktokens: ['t'], lockseconds: 60 },
  rejectEvents: { locktokens: ['t'], reason: 'r' },
  redriveDeadLetters: [{ deliveryIds: ['d-1'] }, { all: true }],
  startReplay: { from: '2026-11-23T10:00:00Z', to: '2026-11-23T11:00:00Z', types: ['t'] },
  testFilters: [
    { filters: [{ sql: 'true' }], archived: { last: 10 } },
    { filters: [], events: [{ specversion: '1.0', id: 'e', source: 's', type: 't', data: {} }] },
  ],
  createUpload: { size: 3, digest: TOKEN, contenttype: 'text/csv; charset=utf-8' },
  UploadRequest: { size: 3, digest: TOKEN },
  putClient: CLIENT,
  startErasure: [
    { subject: 'leerling/123' },
    { events: [{ source: 's', id: 'i' }] },
    { data: { path: '$.leerling.id', equals: '123' } },
    { data: { path: '$.n', equals: 3 } },
  ],
  ClientInput: [
    {},
    { entitlements: [{ typePrefix: 'nl.edu.', source: 's' }] },
    { quotas: { maxConcurrentReplays: 2 } },
  ],
  createSubscription: { sink: 'https://a.example/', types: ['x'], sinkcredential: {} },
  SubscriptionRequest: [
    { sink: 'https://a.example/', source: 's', validation: 'agreed', contentmode: 'batch', retrywindowseconds: 600 },
    { delivery: 'pull', maxdeliverycount: 10, retentionseconds: 60, maxinlinebytes: 65_536, filters: [] },
  ],
  Filter: [{ exact: { type: 'x' } }, { all: [{ not: { sql: 'EXISTS subject' } }, { any: [{ suffix: { a1: 'b' } }] }] }],
  AttributeMatch: { type: 'x', subject: 'y' },
  publishContractVersion: {
    kind: 'asyncapi-data',
    document: { asyncapi: '3.0.0' },
    status: 'deprecated',
    sunset: '2030-01-01',
  },
  ContractVersionInput: [
    { kind: 'openapi-webhook', document: 'openapi: 3.1.0', eventTypes: ['nl.edu.x.v1'], mediaType: 'application/yaml' },
    { kind: 'asyncapi-data', document: {}, description: 'd', owner: {}, contact: {} },
  ],
  changeContract: { description: 'd', owner: {} },
  ContractPatch: { contact: {} },
  changeContractVersion: { status: 'retired', sunset: '2030-01-01T00:00:00Z', eventTypes: ['t'] },
  ContractVersionPatch: [{}, { eventTypes: [] }],
  bindContract: { contract: 'enrolments', version: '1.0.0', mode: 'warn' },
  ContractBindingInput: { contract: 'a', version: '1.2.3-rc.1', mode: 'enforce', message: 'm' },
  ContactPoint: [
    { name: 'Desk', email: 'desk@example.org' },
    { name: 'Desk', url: 'https://example.org/desk' },
  ],
  SinkCredential: [
    { credentialtype: 'ACCESSTOKEN', accesstoken: 'abc.def' },
    { credentialtype: 'CLIENTCREDENTIALS', tokenurl: 'https://idp.example/token', clientid: 'c', clientsecret: 's' },
  ],
};
const PROBES: readonly unknown[] = [
  undefined,
  null,
  '',
  'x',
  'has space',
  'é'.repeat(4096),
  '😀'.repeat(4096),
  'x'.repeat(4097),
  '2026-11-23T10:00:00Z',
  '2026-13-23T10:00:00Z',
  'https://idp.example/token',
  'text/csv',
  TOKEN,
  0,
  -1,
  1,
  1.5,
  10,
  20,
  21,
  43_200,
  43_201,
  2 ** 31,
  true,
  false,
  [],
  [''],
  ['x'],
  [1],
  Array.from({ length: 101 }, (_, i) => `t${i}`),
  {},
  { exact: { type: 'x' } },
  'ACCESSTOKEN',
  'CLIENTCREDENTIALS',
];

/**
 * The schema as the checker sees it: the components the areas check in code (`$ref`) take any
 * value, a schema's references to itself (the recursive Filter) point at its root, and the
 * conditions (`if`/`else`: a push subscription needs a sink and a credential) are left to the
 * code that checks them (subscription-input.ts), as TypeBox's checker leaves them.
 */
function withoutReferences(node: unknown, name?: string): unknown {
  if (Array.isArray(node)) return node.map((item) => withoutReferences(item, name));
  if (node && typeof node === 'object') {
    if ('$ref' in node) return (node as { $ref: unknown }).$ref === `#/components/schemas/${name}` ? { $ref: '#' } : {};
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key]) => !['if', 'then', 'else'].includes(key))
        .map(([key, value]) => [key, withoutReferences(value, name)]),
    );
  }
  return node;
}

function variations(valid: Record<string, unknown>): unknown[] {
  const names = [
    ...Object.keys(valid),
    'extra',
    'typePrefix',
    'source',
    'maxPullSubscriptions',
    'credentialtype',
    'tokenurl',
    'clientid',
    'clientsecret',
    'all',
  ];
  const values: unknown[] = [valid, ...PROBES];
  for (const name of names)
    for (const probe of PROBES) {
      const changed: Record<string, unknown> = { ...valid, [name]: probe };
      if (probe === undefined) delete changed[name];
      values.push(changed);
    }
  return values;
}

describe('the request body checker agrees with Ajv (issue 29 item 2)', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: false, formats: { ...STRING_FORMATS } });
  const ajvCountingUnits = new Ajv2020({ strict: false, formats: { ...STRING_FORMATS }, unicode: false });
  const bodies: [string, RequestBody][] = [...Object.entries(operationBodies), ...Object.entries(componentBodies)];

  it.each(bodies)('issue 29 item 2: %s: a body passes the checker exactly when Ajv takes it', (name, body) => {
    const validate = ajv.compile(withoutReferences(describedSchema(body), name) as object);
    const validateCountingUnits = ajvCountingUnits.compile(withoutReferences(describedSchema(body), name) as object);
    expect(VALID[name], `an example body for ${name}`).toBeDefined();
    for (const valid of [VALID[name]!].flat()) {
      expect(schemaIssues(body, valid)).toEqual([]);
      let refused = 0;
      for (const value of variations(valid)) {
        const issues = schemaIssues(body, value);
        // The checker's verdict; a member the area checks in code (`refusedAs('in-code', …)`) is
        // named by the area, not by schemaIssues, so the issues are empty or a refusal.
        const accepted = Check(body.schema, value);
        if (issues.length > 0) expect(accepted).toBe(false);
        const shown = JSON.stringify(value)?.slice(0, 200);
        if (validate(value) !== validateCountingUnits(value)) {
          // The length difference: TypeBox sides with the UTF-16 count, and only for astral characters.
          expect(shown).toMatch(/[\u{10000}-\u{10FFFF}]/u);
          expect(accepted, shown).toBe(validateCountingUnits(value));
        } else expect(accepted, shown).toBe(validate(value));
        if (!accepted) refused++;
      }
      // The variations reach both answers.
      expect(refused).toBeGreaterThan(0);
    }
  });
});

describe('string lengths: TypeBox and JSON Schema count differently (issue 29 item 2)', () => {
  it('issue 29 item 2, EDU-14: a clientid of 4,096 emoji is in /openapi.json’s maxLength (code points) but TypeBox refuses it (8,192 UTF-16 units)', () => {
    const body = componentBodies['SinkCredential']!;
    const credential = (clientid: string) => ({
      credentialtype: 'CLIENTCREDENTIALS',
      tokenurl: 'https://idp.example/token',
      clientid,
      clientsecret: 's',
    });
    const validate = new Ajv2020({ strict: false, formats: { ...STRING_FORMATS } }).compile(
      describedSchema(body) as object,
    );
    expect(validate(credential('😀'.repeat(4096)))).toBe(true);
    expect(schemaIssues(body, credential('😀'.repeat(4096))).map((issue) => issue.rule)).toEqual(['length']);
    // Below half the limit the two agree; the BMP (é) is counted alike.
    expect(schemaIssues(body, credential('😀'.repeat(2048)))).toEqual([]);
    expect(schemaIssues(body, credential('é'.repeat(4096)))).toEqual([]);
  });
});
