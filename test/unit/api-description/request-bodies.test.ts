/**
 * One schema per request body (issue 29 item 2): the schema that checks a body is the one
 * /openapi.json shows for it, so a limit the code enforces cannot be missing from the description.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KoerierDependencies } from '../../../functions/app/dependencies.js';
import { apiDescriptionApp } from '../../../functions/app/api-description-app.js';
import { componentBodies, operationBodies } from '../../../functions/core/api-description/request-bodies.js';
import { describedSchema } from '../../../functions/core/http/json-body.js';
import type { HttpRequest } from '../../../functions/core/http/messages.js';
import type * as PullRequests from '../../../functions/core/pull/pull-requests.js';
import { parseSinkCredential } from '../../../functions/core/subscriptions/sink-credential-input.js';

type Json = Record<string, unknown>;
type App = typeof apiDescriptionApp;

const config = { publicBaseUrl: 'https://api.example.org/v1', auth: { tokenUrl: 'https://issuer.test/oauth/token' } };
const get: HttpRequest = {
  method: 'GET',
  path: '/openapi.json',
  headers: {},
  query: {},
  routeKey: 'GET /openapi.json',
  pathParameters: {},
  body: Buffer.alloc(0),
};

/** The document as GET /openapi.json serves it. */
async function served(app: App = apiDescriptionApp): Promise<Json> {
  const answer = await app({ config } as unknown as Pick<KoerierDependencies, 'config'>)(get);
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body) as Json;
}

function operations(document: Json): Map<string, Json> {
  const found = new Map<string, Json>();
  for (const item of Object.values(document['paths'] as Record<string, Record<string, unknown>>))
    for (const operation of Object.values(item))
      if (operation && typeof operation === 'object' && 'operationId' in operation)
        found.set((operation as { operationId: string }).operationId, operation as Json);
  return found;
}

/** The schema of the operation's application/json request body, a component `$ref` followed. */
function requestSchema(document: Json, operationId: string): Json | undefined {
  const body = operations(document).get(operationId)?.['requestBody'] as
    { content?: Record<string, { schema?: Json }> } | undefined;
  const schema = body?.content?.['application/json']?.schema;
  const ref = schema?.['$ref'];
  return typeof ref === 'string' ? componentSchema(document, ref.replace('#/components/schemas/', '')) : schema;
}

function componentSchema(document: Json, name: string): Json | undefined {
  return ((document['components'] as Json)['schemas'] as Record<string, Json>)[name];
}

const LIMITS = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'required',
  'additionalProperties',
  'const',
  'enum',
  'type',
]);

/** Every limit of `schema` with its JSON Pointer, `/properties/maxevents/maximum` = 100. */
function limitsOf(schema: unknown, at = ''): Map<string, unknown> {
  const found = new Map<string, unknown>();
  if (Array.isArray(schema))
    schema.forEach((item, i) => limitsOf(item, `${at}/${i}`).forEach((v, k) => found.set(k, v)));
  else if (schema && typeof schema === 'object')
    for (const [key, value] of Object.entries(schema)) {
      if (LIMITS.has(key) && (typeof value !== 'object' || key === 'required' || key === 'enum'))
        found.set(`${at}/${key}`, value);
      if (typeof value === 'object') limitsOf(value, `${at}/${key}`).forEach((v, k) => found.set(k, v));
    }
  return found;
}

/** The limits of the checked schema that the described one lacks or states otherwise. */
function missingLimits(checked: unknown, described: unknown): string[] {
  const stated = limitsOf(described);
  return [...limitsOf(checked)]
    .filter(([pointer, value]) => JSON.stringify(stated.get(pointer)) !== JSON.stringify(value))
    .map(([pointer, value]) => `${pointer} = ${JSON.stringify(value)}`);
}

describe('request bodies in /openapi.json (issue 29 item 2)', () => {
  afterEach(() => {
    vi.doUnmock('../../../functions/core/pull/pull-requests.js');
    vi.resetModules();
  });

  it('issue 29 item 2: every body schema the code checks with is its operation’s request body in /openapi.json, with every limit', async () => {
    const document = await served();
    for (const [operationId, body] of Object.entries(operationBodies)) {
      const described = requestSchema(document, operationId);
      expect(described, operationId).toBeDefined();
      expect(missingLimits(body.schema, described), operationId).toEqual([]);
      expect(described, operationId).toEqual(describedSchema(body));
    }
    for (const [name, body] of Object.entries(componentBodies)) {
      expect(missingLimits(body.schema, componentSchema(document, name)), name).toEqual([]);
      expect(componentSchema(document, name), name).toEqual(describedSchema(body));
    }
  });

  it('issue 29 item 2: the comparison finds a limit the description lacks', () => {
    const checked = operationBodies['receiveEvents']!.schema;
    const described = structuredClone(describedSchema(operationBodies['receiveEvents']!)) as {
      properties: Record<string, Json>;
    };
    delete described.properties['maxevents']!['maximum'];
    expect(missingLimits(checked, described)).toEqual(['/properties/maxevents/maximum = 100']);
  });

  it('issue 29 item 2, EDU-14: the accesstoken limits the code enforces (4,096 characters, an RFC 6750 b64token) are in /openapi.json', async () => {
    const sinkCredential = componentSchema(await served(), 'SinkCredential') as { anyOf: Json[] };
    const accessToken = sinkCredential.anyOf.find(
      (variant) => (variant['properties'] as Record<string, Json>)['credentialtype']?.['const'] === 'ACCESSTOKEN',
    );
    const described = (accessToken?.['properties'] as Record<string, Json>)['accesstoken'];
    expect(described).toMatchObject({ type: 'string', minLength: 1, maxLength: 4096, writeOnly: true });
    const pattern = new RegExp(described!['pattern'] as string);
    // What the description says is what the code refuses.
    const rules = { allowLoopback: false, allowedPorts: [443], policy: 'bearer-or-oauth2' } as const;
    const issues = (accesstoken: string) =>
      parseSinkCredential({ credentialtype: 'ACCESSTOKEN', accesstoken }, rules).issues.map((i) => i.rule);
    expect(issues('a'.repeat(4096))).toEqual([]);
    expect(issues('a'.repeat(4097))).toEqual(['length']);
    expect(pattern.test('has space')).toBe(false);
    expect(issues('has space')).toEqual(['pattern']);
  });

  it('issue 29 item 2: the subscription and contract bodies are checked with the schemas /openapi.json shows, with the limits that were missing there', async () => {
    const document = await served();
    for (const operationId of [
      'createSubscription',
      'publishContractVersion',
      'changeContract',
      'changeContractVersion',
      'bindContract',
    ])
      expect(operationBodies, operationId).toHaveProperty(operationId);
    const properties = (name: string) => componentSchema(document, name)!['properties'] as Record<string, Json>;
    // Enforced by the code, missing from the hand-written description before.
    expect(properties('SubscriptionRequest')['source']).toMatchObject({ minLength: 1, maxLength: 1024 });
    expect(properties('SubscriptionRequest')['types']).toMatchObject({ maxItems: 32, items: { maxLength: 1024 } });
    expect(properties('SubscriptionRequest')['filters']).toMatchObject({ maxItems: 64 });
    expect(properties('ContractVersionPatch')['eventTypes']).toMatchObject({
      maxItems: 100,
      items: { maxLength: 256 },
    });
    expect(properties('ContractBindingInput')['message']).toMatchObject({ maxLength: 1024 });
    expect(properties('ContactPoint')['email']).toMatchObject({ maxLength: 254, format: 'email' });
  });

  it('issue 29 item 2, CESQL-3: the sql filter’s limit (4,096 bytes, so at most 4,096 characters) is in /openapi.json', async () => {
    const filter = componentSchema(await served(), 'Filter')!;
    const sql = (filter['properties'] as Record<string, Json>)['sql'];
    expect(sql).toMatchObject({ type: 'string', minLength: 1, maxLength: 4096 });
    expect(sql!['description']).toContain('at most 4096 bytes');
    // The recursion is the component's own: all, any and not refer to Filter.
    expect((filter['properties'] as Record<string, Json>)['not']).toEqual({ $ref: '#/components/schemas/Filter' });
    expect((filter['properties'] as Record<string, Json>)['all']!['items']).toEqual({
      $ref: '#/components/schemas/Filter',
    });
    expect(JSON.stringify(filter)).not.toContain('$id');
  });

  it('issue 29 item 2: a limit added to one body schema appears in /openapi.json with no other edit', async () => {
    // The receive body's schema gains a limit, as an edit of pull-requests.ts alone would give it.
    vi.resetModules();
    vi.doMock('../../../functions/core/pull/pull-requests.js', async (importOriginal) => {
      const original = await importOriginal<typeof PullRequests>();
      const properties = original.RECEIVE_BODY.schema['properties'] as Record<string, Record<string, unknown>>;
      properties['maxevents']!['multipleOf'] = 5;
      return original;
    });
    const { apiDescriptionApp: fresh } = await import('../../../functions/app/api-description-app.js');
    const { parseReceiveRequest } = await import('../../../functions/core/pull/pull-requests.js');
    const maxevents = (requestSchema(await served(fresh), 'receiveEvents')!['properties'] as Record<string, Json>)[
      'maxevents'
    ];
    expect(maxevents).toMatchObject({ multipleOf: 5, minimum: 1, maximum: 100 });
    // And the same object checks the body.
    expect(() => parseReceiveRequest(Buffer.from('{"maxevents": 7}'))).toThrow();
    expect(parseReceiveRequest(Buffer.from('{"maxevents": 10}')).maxEvents).toBe(10);
  });
});
