/**
 * Open Notificaties' own OpenAPI document (open-zaak/open-notificaties, `src/openapi.yaml`), which
 * the ZGW adapter's tests hold it to (issue 34). Never in this repository: read from
 * `OPEN_NOTIFICATIES_OPENAPI` or `../shared/testdata/open-notificaties/openapi.yaml`; a test that
 * needs it skips those checks, saying so, when neither is there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { parse } from 'yaml';

const SHARED_COPY = resolve(process.cwd(), '../shared/testdata/open-notificaties/openapi.yaml');

/** The document's path, or undefined when it is not on this machine. */
export function openNotificatiesDocumentPath(): string | undefined {
  const fromEnv = process.env['OPEN_NOTIFICATIES_OPENAPI'];
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  return existsSync(SHARED_COPY) ? SHARED_COPY : undefined;
}

export const MISSING_DOCUMENT_NOTE =
  "Open Notificaties' openapi.yaml is not here (set OPEN_NOTIFICATIES_OPENAPI or place it at ../shared/testdata/open-notificaties/openapi.yaml): its checks are skipped";

export function readOpenNotificatiesDocument(path: string): Document {
  return parse(readFileSync(path, 'utf8')) as Document;
}

export interface ExchangeValidator {
  /** Throws with every finding when the request or its answer breaks the document. */
  check(
    request: {
      method: string;
      path: string;
      headers: Record<string, string>;
      body?: unknown;
      query?: Record<string, string>;
    },
    answer: { status: number; body: unknown },
  ): void;
}

/**
 * OpenAPI 3.0: a `required` property that is `writeOnly` is required in requests only (their
 * Abonnement's `auth`). openapi-backend reads `required` alike both ways, so answers are checked
 * against a copy whose schemas leave the write-only members out of `required`.
 */
function forResponses(document: Document): Document {
  const copy = structuredClone(document) as unknown as { components?: { schemas?: Record<string, SchemaObject> } };
  for (const schema of Object.values(copy.components?.schemas ?? {})) {
    const writeOnly = Object.entries(schema.properties ?? {})
      .filter(([, member]) => member.writeOnly === true)
      .map(([name]) => name);
    if (schema.required) schema.required = schema.required.filter((name) => !writeOnly.includes(name));
  }
  return copy as unknown as Document;
}

interface SchemaObject {
  properties?: Record<string, { writeOnly?: boolean }>;
  required?: string[];
}

async function backend(definition: Document, apiRoot: string): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition,
    apiRoot,
    strict: false,
    quick: false,
    // The formats their document names (uri, uuid, date-time) checked, not ignored.
    customizeAjv: (ajv) => {
      addFormats.default(ajv);
      return ajv;
    },
  });
  await api.init();
  return api;
}

/** openapi-backend (Ajv underneath) over their document, paths relative to the adapter's base path. */
export async function exchangeValidator(path: string, apiRoot: string): Promise<ExchangeValidator> {
  const document = readOpenNotificatiesDocument(path);
  const api = await backend(document, apiRoot);
  const answers = await backend(forResponses(document), apiRoot);
  return {
    check(request, answer) {
      const req = {
        method: request.method,
        path: request.path,
        headers: request.headers,
        query: request.query ?? {},
        body: request.body,
      };
      const operation = api.matchOperation(req);
      if (operation === undefined)
        throw new Error(`no operation of Open Notificaties matches ${request.method} ${request.path}`);
      const requestResult = api.validateRequest(req, operation);
      const responseResult = answers.validateResponse(answer.body, operation.operationId!, answer.status);
      const findings = [
        ...(requestResult.errors ?? []).map((e) => `request: ${e.instancePath} ${e.message ?? ''}`),
        ...(responseResult.errors ?? []).map((e) => `response ${answer.status}: ${e.instancePath} ${e.message ?? ''}`),
      ];
      if (findings.length > 0)
        throw new Error(`${operation.operationId ?? ''} ${request.method} ${request.path}: ${findings.join('; ')}`);
    },
  };
}

/**
 * Their `Message` schema (the notificatie Open Notificaties posts to an abonnement's callback),
 * with Ajv: the errors of `body`, empty when it is a notificatie as they describe one.
 */
export function notificatieSchemaCheck(path: string): (body: unknown) => string[] {
  const document = readOpenNotificatiesDocument(path) as unknown as { components: { schemas: Record<string, object> } };
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validate = ajv.compile({ ...document.components.schemas['Message'], additionalProperties: false });
  return (body) => (validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}
