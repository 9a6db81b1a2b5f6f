/**
 * OpenAPI paths of erasures (issue 31 item 4; docs/PRIVACY.md, "Erasure"), scope `admin`: erase
 * the events about one person from the archive, the claim check, dead letters and pull queues,
 * and read the audit record of what was removed and what could not be reached.
 */
import {
  adminOnlySecurity,
  authProblems,
  commonProblems,
  idempotencyKeyParameter,
  idempotencyProblems,
  problemResponse,
  versionHeader,
} from './components.js';
import { describedSchema } from '../http/json-body.js';
import { ERASURE_BODY } from '../erasure/erasure-request.js';

const security = adminOnlySecurity;
const count = (description: string) => ({ type: 'integer', minimum: 0, description });

const erasureSchema = {
  type: 'object',
  required: ['id', 'state', 'selector', 'requestedBy', 'createdAt', 'updatedAt', 'erased', 'notReached'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    state: { type: 'string', enum: ['running', 'finished', 'failed'] },
    selector: {
      type: 'object',
      description: 'The selector without the personal data: its kind and a keyed hash (HMAC-SHA256) of it.',
      required: ['kind', 'digest'],
      properties: {
        kind: { type: 'string', enum: ['subject', 'events', 'data'] },
        digest: { type: 'string', description: '`hmac-sha256=:<base64>:`' },
      },
    },
    requestedBy: { type: 'string', description: 'The admin client that asked.' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: 'string', format: 'date-time' },
    erased: {
      type: 'object',
      required: [
        'archiveEvents',
        'archiveObjectsRewritten',
        'archiveObjectsDeleted',
        'payloadObjects',
        'deadLetterEvents',
        'pullQueueEvents',
        'orderedLaneEvents',
      ],
      properties: {
        archiveEvents: count('Events taken out of the archive.'),
        archiveObjectsRewritten: count('Archive objects written again without them.'),
        archiveObjectsDeleted: count('Archive objects removed, nothing else being in them.'),
        payloadObjects: count('Claim-check objects (data kept by reference) removed.'),
        deadLetterEvents: count('Events taken out of dead letters.'),
        pullQueueEvents: count('Events taken off pull subscriptions’ queues.'),
        orderedLaneEvents: count(
          'Events taken out of ordered subscriptions’ lanes, where they waited for their turn; a numbered one leaves a gap in its key’s `sequence`.',
        ),
      },
    },
    notReached: {
      type: 'array',
      description: 'Where copies may remain, and why; never which events.',
      items: {
        type: 'object',
        required: ['where', 'detail'],
        properties: {
          where: {
            type: 'string',
            enum: ['receivers', 'pull-queues-in-flight', 'push-deliveries-queued', 'pull-queue-gone'],
          },
          count: { type: 'integer', minimum: 0 },
          detail: { type: 'string' },
        },
      },
    },
    reason: { type: 'string', description: 'Why an erasure failed.' },
  },
} as const;

export const erasureSchemas = { Erasure: erasureSchema } as const;

const erasureResponse = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { ...versionHeader, ...headers },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Erasure' } } },
});

export const erasurePaths = {
  '/erasures': {
    post: {
      operationId: 'startErasure',
      summary: 'Erase the events about one person (AVG article 17)',
      description:
        'Exactly one of `subject`, `events` or `data`. Runs in the background: the archive, the claim check, dead letters and pull queues; ' +
        'the answer and `GET /erasures/{id}` are the audit record, which keeps the selector only as a keyed hash (docs/PRIVACY.md, "Erasure").',
      tags: ['Administration'],
      security,
      parameters: [idempotencyKeyParameter],
      requestBody: { required: true, content: { 'application/json': { schema: describedSchema(ERASURE_BODY) } } },
      responses: {
        '202': erasureResponse('Started.', {
          Location: { description: 'The erasure’s audit record.', schema: { type: 'string' } },
        }),
        '400': problemResponse('Invalid body (`invalid-erasure-request`) or Idempotency-Key.'),
        ...authProblems,
        '409': problemResponse('A request with this Idempotency-Key is still in progress.'),
        '422': idempotencyProblems['422'],
        ...commonProblems,
      },
    },
    get: {
      operationId: 'listErasures',
      summary: 'The erasures’ audit records, newest first (at most 100)',
      tags: ['Administration'],
      security,
      responses: {
        '200': {
          description: 'The audit records.',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['erasures'],
                properties: { erasures: { type: 'array', items: { $ref: '#/components/schemas/Erasure' } } },
              },
            },
          },
        },
        ...authProblems,
        ...commonProblems,
      },
    },
  },
  '/erasures/{id}': {
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
    get: {
      operationId: 'getErasure',
      summary: 'One erasure’s audit record: what was removed where, what could not be reached',
      tags: ['Administration'],
      security,
      responses: {
        '200': erasureResponse('The audit record.'),
        ...authProblems,
        '404': problemResponse('No such erasure.'),
        ...commonProblems,
      },
    },
  },
} as const;
