/**
 * The request body checker (functions/core/http/json-schema-check.ts, issue 29 item 2) interprets
 * the JSON Schema keywords the body schemas use; here it must agree with Ajv, a full JSON Schema
 * 2020-12 validator, on every body schema for many values, so that what /openapi.json says a
 * body may be is what Koerier takes.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { componentBodies, operationBodies } from '../../../functions/core/api-description/request-bodies.js';
import { describedSchema, schemaIssues, type RequestBody } from '../../../functions/core/http/json-body.js';
import { FORMATS } from '../../../functions/core/http/json-schema-check.js';

const TOKEN = 'sha-256=:' + 'A'.repeat(43) + '=:';
/** Bodies each schema takes (one per form), to vary member by member. */
const VALID: Readonly<Record<string, Record<string, unknown> | Record<string, unknown>[]>> = {
  receiveEvents: { maxevents: 10 },
  acknowledgeEvents: { locktokens: ['t'] },
  releaseEvents: { locktokens: ['t'], delayseconds: 5 },
  renewEventLocks: { locktokens: ['t'], lockseconds: 60 },
  rejectEvents: { locktokens: ['t'], reason: 'r' },
  redriveDeadLetters: [{ deliveryIds: ['d-1'] }, { all: true }],
  startReplay: { from: '2026-11-23T10:00:00Z', to: '2026-11-23T11:00:00Z', types: ['t'] },
  createUpload: { size: 3, digest: TOKEN, contenttype: 'text/csv; charset=utf-8' },
  UploadRequest: { size: 3, digest: TOKEN },
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

/** The schema with the components the areas check in code (`$ref`) taking any value, as the checker does. */
function withoutReferences(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutReferences);
  if (node && typeof node === 'object') {
    if ('$ref' in node) return {};
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withoutReferences(value)]));
  }
  return node;
}

function variations(valid: Record<string, unknown>): unknown[] {
  const names = [...Object.keys(valid), 'extra', 'credentialtype', 'tokenurl', 'clientid', 'clientsecret', 'all'];
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
  const ajv = new Ajv2020({ strict: false, allErrors: false, formats: { ...FORMATS } });
  const bodies: [string, RequestBody][] = [...Object.entries(operationBodies), ...Object.entries(componentBodies)];

  it.each(bodies)('issue 29 item 2: %s: a body passes the checker exactly when Ajv takes it', (name, body) => {
    const validate = ajv.compile(withoutReferences(describedSchema(body)) as object);
    expect(VALID[name], `an example body for ${name}`).toBeDefined();
    for (const valid of [VALID[name]!].flat()) {
      expect(schemaIssues(body, valid)).toEqual([]);
      let refused = 0;
      for (const value of variations(valid)) {
        const issues = schemaIssues(body, value);
        expect(issues.length === 0, JSON.stringify(value)?.slice(0, 200)).toBe(validate(value));
        if (issues.length > 0) refused++;
      }
      // The variations reach both answers.
      expect(refused).toBeGreaterThan(0);
    }
  });
});
