/** OpenAPI paths of the claim check (EDU-1, CARD-6): GET /payloads/{id} and POST /payloads. */
import {
  authProblems,
  commonProblems,
  idempotencyKeyParameter,
  idempotencyProblems,
  problemResponse,
  versionHeader,
} from './components.js';
import { UPLOAD_BODY } from '../claim-check/uploads.js';
import { describedSchema } from '../http/json-body.js';
import { quotaDefaultText } from '../quotas/client-quotas.js';

export const payloadsSchemas = {
  UploadRequest: describedSchema(UPLOAD_BODY),
  UploadGrant: {
    type: 'object',
    required: ['uploadid', 'method', 'uploadurl', 'headers', 'uploadexpiresat', 'dataref', 'publishbefore'],
    properties: {
      uploadid: { type: 'string', format: 'uuid' },
      method: { type: 'string', enum: ['PUT'] },
      uploadurl: {
        type: 'string',
        format: 'uri',
        description: 'Presigned S3 URL: a bearer credential for this one object; keep it out of logs.',
      },
      headers: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Headers the PUT must carry exactly (they are signed).',
      },
      uploadexpiresat: {
        type: 'string',
        format: 'date-time',
        description: 'The PUT must start before this (15 minutes).',
      },
      dataref: {
        type: 'string',
        format: 'uri',
        description: 'Publish the event with this `dataref` and no data; Koerier rewrites it to its data URL.',
      },
      publishbefore: {
        type: 'string',
        format: 'date-time',
        description: 'The event must be published within 24 hours of the grant.',
      },
    },
  },
} as const;

export const payloadsPaths = {
  '/payloads/{id}': {
    get: {
      operationId: 'getPayload',
      summary: 'The data behind a Koerier dataref',
      description:
        'The data of an event that travelled by reference (EDU-1): the event carries `dataref` to this URL, `koerierdatadigest` ' +
        '(SHA-256, RFC 9530 form) and `koerierdatasize`. Allowed to the event’s publisher and to the owners of the subscriptions ' +
        'it was sent to by reference; to anyone else it does not exist (404). Data up to 4 MiB comes in the answer; larger data by a ' +
        '307 redirect to a presigned URL that works for 5 minutes. Every fetch is logged (who, which event, when). Requires ' +
        '`events:consume` (subscribers) or `events:publish` (the publisher).',
      tags: ['Events'],
      security: [{ oauth2: ['events:consume'] }, { oauth2: ['events:publish'] }],
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } },
        { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: 'The data, with the event’s `datacontenttype`.',
          headers: {
            ...versionHeader,
            ETag: { description: 'From the digest.', schema: { type: 'string' } },
            'Repr-Digest': {
              description: 'SHA-256 of the body (RFC 9530), equal to `koerierdatadigest`.',
              schema: { type: 'string' },
            },
          },
          content: { '*/*': { schema: {} } },
        },
        '304': { description: 'The ETag matched If-None-Match.', headers: versionHeader },
        '307': {
          description: 'Too large for an answer: fetch it from `Location` (presigned, 5 minutes).',
          headers: { ...versionHeader, Location: { schema: { type: 'string' } } },
        },
        ...authProblems,
        '404': problemResponse('No such data, or not for this client.'),
        '410': problemResponse(
          'The data was kept for its retention (as long as a replay can send its event, plus a day past the longest queue retention) and is gone.',
        ),
        ...commonProblems,
      },
    },
  },
  '/payloads': {
    post: {
      operationId: 'createUpload',
      summary: 'Upload data too large for a request',
      description:
        'Gives the producer a presigned PUT for exactly the promised size and SHA-256 (S3 refuses other bytes). Then publish the event ' +
        'with the answer’s `dataref` and no data: before the 202 Koerier checks the object’s size and digest and rewrites `dataref` to ' +
        'its own data URL (GET /payloads/{id}). Requires `events:publish`.',
      tags: ['Events'],
      security: [{ oauth2: ['events:publish'] }],
      parameters: [idempotencyKeyParameter],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/UploadRequest' } } },
      },
      responses: {
        '201': {
          description: 'The upload is granted.',
          headers: versionHeader,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/UploadGrant' } } },
        },
        '400': problemResponse('Invalid upload request; `errors` names the members.'),
        ...authProblems,
        ...idempotencyProblems,
        '413': problemResponse(
          'The upload alone is larger than the client’s whole hourly quota `uploadBytesPerHour` (`quota-exceeded`).',
        ),
        '429': problemResponse(
          'The promised sizes of the uploads granted to this client this clock hour would pass its quota `uploadBytesPerHour` (`quota-exceeded`: `quota`, ' +
            '`limit`, `used`, `requested`; default ' +
            quotaDefaultText('uploadBytesPerHour') +
            ', an operator sets a partner’s own in PUT /clients/{clientId}); retry after Retry-After, when the hour ends. ' +
            'Or the client’s request rate was passed (`rate-limited`).',
          { 'Retry-After': { schema: { type: 'integer' } } },
        ),
        ...commonProblems,
      },
    },
  },
} as const;
