/**
 * The rules every operation of Koerier's API description follows, applied once to the assembled
 * paths instead of remembered per area, so a route added by any area complies when it lands:
 *
 * - every response, errors too, names the `API-Version` header (Logius API Design Rules,
 *   /core/version-header): the HTTP adapter sets it on every answer;
 * - every operation can answer 400 (/core/error-handling/invalid-input: a malformed parameter,
 *   header or body), 500 (the adapter's answer to anything unexpected), and, when it needs a
 *   token, 401, 403 and 429 (functions/app/authentication.ts: the token check, the scope, the
 *   per-client throttle), each as a problem+json `Problem`;
 * - a 2xx JSON body written inline becomes a named component schema (`<OperationId>Response`),
 *   so a client generator names its type after the operation instead of inventing a name.
 *
 * An area's own response for one of these statuses is kept; only what is missing is added.
 */
import { problemResponse } from './components.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export const API_VERSION_HEADER_REF = { $ref: '#/components/headers/API-Version' } as const;

type Json = Record<string, unknown>;

interface Operation {
  operationId?: string;
  security?: readonly Record<string, readonly string[]>[];
  responses?: Record<string, Json>;
}

const defaultProblems = {
  '400': problemResponse(
    'The request is malformed: a parameter, header or body Koerier cannot read (`errors` names what, where it can).',
  ),
  '500': problemResponse(
    'Unexpected failure; nothing more is said. The request may be retried (with the same Idempotency-Key, where it takes one).',
  ),
};

const securedProblems = {
  '401': problemResponse(
    'Missing, expired or otherwise invalid access token (WWW-Authenticate: Bearer error="invalid_token").',
    {
      'WWW-Authenticate': { schema: { type: 'string' } },
    },
  ),
  '403': problemResponse('The token lacks the scope this operation needs (error="insufficient_scope").'),
  '429': problemResponse('Too many requests from this client (its per-client limit); retry after Retry-After.', {
    'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } },
  }),
};

/** True when the operation needs a token: some security requirement names a scheme. */
function isSecured(operation: Operation): boolean {
  return (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
}

function pascal(operationId: string): string {
  return operationId.charAt(0).toUpperCase() + operationId.slice(1);
}

function isNamedOrOpaque(schema: Json): boolean {
  // A $ref is named already; a schema without structure (binary data, any value) has no type to name.
  return '$ref' in schema || !('type' in schema || 'properties' in schema || 'items' in schema);
}

/**
 * The paths with every operation completed as above, and the component schemas lifted out of
 * inline 2xx bodies. Pure: the input is not changed.
 */
export function withOperationDefaults(paths: Record<string, Json>): {
  paths: Record<string, Json>;
  liftedSchemas: Record<string, Json>;
} {
  const liftedSchemas: Record<string, Json> = {};
  const completed: Record<string, Json> = {};
  for (const [path, item] of Object.entries(paths)) {
    const completedItem: Json = { ...item };
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation) continue;
      const responses: Record<string, Json> = {
        ...(isSecured(operation) ? securedProblems : {}),
        ...defaultProblems,
        ...operation.responses,
      };
      const withHeaders: Record<string, Json> = {};
      for (const status of Object.keys(responses).sort()) {
        const response = responses[status]!;
        const headers = { ...(response['headers'] as Json | undefined), 'API-Version': API_VERSION_HEADER_REF };
        withHeaders[status] = { ...response, headers, ...liftedContent(response, status, operation, liftedSchemas) };
      }
      completedItem[method] = { ...operation, responses: withHeaders };
    }
    completed[path] = completedItem;
  }
  return { paths: completed, liftedSchemas };
}

function liftedContent(response: Json, status: string, operation: Operation, lifted: Record<string, Json>): Json {
  const content = response['content'] as Record<string, { schema?: Json }> | undefined;
  if (!status.startsWith('2') || !content) return {};
  const entries = Object.entries(content);
  const result: Record<string, Json> = {};
  for (const [mediaType, media] of entries) {
    if (!media.schema || isNamedOrOpaque(media.schema)) {
      result[mediaType] = media;
      continue;
    }
    if (!operation.operationId)
      throw new Error(`an operation with an inline ${status} body needs an operationId to name its schema`);
    const base = `${pascal(operation.operationId)}${entries.length > 1 ? pascal(mediaType.replace(/[^a-z0-9]+/gi, '')) : ''}Response`;
    // Two 2xx answers of one operation with different inline bodies: the status tells them apart.
    const name = base in lifted ? `${base}${status}` : base;
    lifted[name] = media.schema;
    result[mediaType] = { ...media, schema: { $ref: `#/components/schemas/${name}` } };
  }
  return { content: result };
}
