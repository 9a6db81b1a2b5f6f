/**
 * The ZGW error body (issue 34): what Open Notificaties answers a refusal with, `Fout` (`type`,
 * `code`, `title`, `status`, `detail`, `instance`) and, for a 400, `ValidatieFout`, which adds
 * `invalidParams` (`name`, `code`, `reason`, one per field). ZGW clients branch on `code` and on
 * the `invalidParams` names, so these carry Open Notificaties' own codes (`kenmerken_inconsistent`,
 * `message_kanaal`, `jwt-expired`, …). Thrown as a `KoerierError` like every refusal in Koerier:
 * its problem simply has these members, so `problemAnswer` writes the ZGW body unchanged.
 */
import { randomUUID } from 'node:crypto';
import { Errors, ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import type { TSchema } from '@sinclair/typebox';
import { Check } from '@sinclair/typebox/value';
import { KoerierError, type Problem } from '../http/problems.js';
import { registerStringFormats } from '../http/string-formats.js';

export interface InvalidParam {
  readonly name: string;
  readonly code: string;
  readonly reason: string;
}

/** Where the ZGW types point: Koerier's own pages of its problem types, one per `code`. */
const ZGW_PROBLEM_BASE = '/v1/problems/zgw-';

const TITLES: Readonly<Record<number, string>> = {
  400: 'Invalid input.',
  401: 'Authenticatiegegevens zijn niet opgegeven.',
  403: 'Je hebt geen toestemming om deze actie uit te voeren.',
  404: 'Niet gevonden.',
  415: 'Niet ondersteund media type.',
  502: 'Bad gateway.',
};

/** A ZGW `Fout` (or `ValidatieFout` with `invalidParams`) as a thrown refusal. */
export function zgwRefusal(
  status: number,
  code: string,
  detail: string,
  invalidParams?: readonly InvalidParam[],
  headers: Readonly<Record<string, string>> = {},
): KoerierError {
  const body: Problem = {
    type: `${ZGW_PROBLEM_BASE}${code}`,
    code,
    title: TITLES[status] ?? 'Fout.',
    status,
    detail,
    // vng-api-common names each occurrence by a fresh URN, for the logs.
    instance: `urn:uuid:${randomUUID()}`,
    ...(invalidParams === undefined ? {} : { invalidParams }),
  };
  return new KoerierError(body, { headers });
}

/** A 400 `ValidatieFout` with the given fields. */
export function invalidInput(invalidParams: readonly InvalidParam[]): KoerierError {
  return zgwRefusal(400, 'invalid', 'Invalid input.', invalidParams);
}

export function notFound(): KoerierError {
  return zgwRefusal(404, 'not_found', 'Niet gevonden.');
}

/**
 * Parses `body` as JSON and checks it against `schema`; throws the `ValidatieFout` naming each
 * member that is wrong, with the codes Django REST framework gives (`required`, `max_length`,
 * `invalid`, `parse_error`). Returns the value typed by the schema.
 */
export function readZgwBody<T>(body: Buffer, schema: TSchema): T {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw zgwRefusal(400, 'parse_error', 'JSON parse error.', [
      { name: 'nonFieldErrors', code: 'parse_error', reason: 'De body is geen geldige JSON.' },
    ]);
  }
  registerStringFormats();
  if (Check(schema, value)) return value as T;
  const params = new Map<string, InvalidParam>();
  for (const error of Errors(schema, value)) {
    const param = invalidParamOf(error);
    if (!params.has(param.name)) params.set(param.name, param);
  }
  throw invalidInput([...params.values()]);
}

/** `/kanalen/0/naam` → `kanalen.0.naam`, the dotted name vng-api-common gives a nested field. */
function nameOf(path: string): string {
  return path === '' ? 'nonFieldErrors' : path.slice(1).split('/').join('.');
}

function invalidParamOf(error: ValueError): InvalidParam {
  const name = nameOf(error.path);
  if (error.value === undefined) return { name, code: 'required', reason: 'Dit veld is vereist.' };
  if (error.type === ValueErrorType.StringMaxLength) {
    const limit = String(error.schema['maxLength']);
    return { name, code: 'max_length', reason: `Zorg ervoor dat dit veld niet meer dan ${limit} karakters bevat.` };
  }
  if (error.type === ValueErrorType.StringFormat)
    return { name, code: 'invalid', reason: 'Voer een geldige URL of datum/tijd in.' };
  return { name, code: 'invalid', reason: error.message };
}
