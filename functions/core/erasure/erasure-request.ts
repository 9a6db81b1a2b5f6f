/**
 * The erasure API's request body, its answer and its refusals (issue 31 item 4; docs/PRIVACY.md,
 * "Erasure"). Exactly one way to name the events: `subject`, `events` or `data`.
 */
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { API_BASE_PATH } from '../http/api-version.js';
import { bodyRefusal, readJsonBody, requestBody } from '../http/json-body.js';
import { KoerierError, problems, type ValidationIssue } from '../http/problems.js';
import { parseDataPath, type EventSelector } from './event-selector.js';
import type { ErasureRecord } from './ports.js';

const MAX_EVENTS = 1000;
const text = (description: string) => Type.String({ minLength: 1, maxLength: 2048, description });

export const ERASURE_BODY = requestBody({
  schema: Type.Object(
    {
      subject: Type.Optional(text('Every event whose CloudEvents `subject` is exactly this.')),
      events: Type.Optional(
        Type.Array(
          Type.Object(
            { source: text('The event’s `source`.'), id: text('The event’s `id`.') },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: MAX_EVENTS, description: 'These events, by `source` and `id` (CE-17).' },
        ),
      ),
      data: Type.Optional(
        Type.Object(
          {
            path: text(
              "A definite JSONPath into `data` (`$.leerling.id`, `$['a'][0]`): member names and indexes only.",
            ),
            equals: Type.Union([Type.String({ maxLength: 2048 }), Type.Number(), Type.Boolean()], {
              description:
                'The value at `path` of every event to erase (compared exactly, also for data kept by reference).',
            }),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-erasure-request',
  requirement: 'PRIV-2',
});

/** One selector from the body; throws the 400 naming every problem. */
export function parseErasureRequest(body: Buffer): EventSelector {
  const { subject, events, data } = readJsonBody(body, ERASURE_BODY);
  const given = [subject, events, data].filter((member) => member !== undefined).length;
  const issues: ValidationIssue[] = [];
  if (given !== 1)
    issues.push({
      attribute: 'subject',
      rule: 'one-selector',
      requirement: 'PRIV-2',
      message: 'Give exactly one of "subject", "events" or "data".',
    });
  const path = data === undefined ? undefined : parseDataPath(data.path);
  if (data !== undefined && path === undefined)
    issues.push({
      attribute: 'data.path',
      rule: 'json-path',
      requirement: 'PRIV-2',
      message: 'A definite JSONPath from $ of member names and array indexes, such as $.leerling.id.',
    });
  if (issues.length > 0) throw bodyRefusal(ERASURE_BODY, issues);
  if (subject !== undefined) return { kind: 'subject', subject };
  if (events !== undefined) return { kind: 'events', events };
  return { kind: 'data', path: path!, equals: data!.equals };
}

/** The record as an operator reads it (`GET /erasures/{id}`): the audit record, times as RFC 3339. */
export function erasureView(record: ErasureRecord): Record<string, unknown> {
  return {
    id: record.id,
    state: record.state,
    selector: { kind: record.selectorKind, digest: record.selectorDigest },
    requestedBy: record.requestedBy,
    createdAt: new Date(record.createdAt).toISOString(),
    updatedAt: new Date(record.updatedAt).toISOString(),
    ...(record.finishedAt === undefined ? {} : { finishedAt: new Date(record.finishedAt).toISOString() }),
    erased: record.erased,
    notReached: record.notReached,
    ...(record.reason === undefined ? {} : { reason: record.reason }),
  };
}

export function erasureLocation(id: string): string {
  return `${API_BASE_PATH}/erasures/${id}`;
}

export function erasureNotFound(id: string): KoerierError {
  return new KoerierError(problems.notFound(`No erasure ${id}.`));
}
