/** OpenAPI paths of the ingest: POST and OPTIONS /events; its GET, the archive search, is event-search-paths.ts. */
import {
  authProblems,
  commonProblems,
  idempotencyKeyParameter,
  idempotencyProblems,
  problemResponse,
  versionHeader,
} from './components.js';
import { searchEventsOperation } from './event-search-paths.js';

const cloudEventSchema = {
  type: 'object',
  description: 'A CloudEvent in the JSON event format, validated against the NL GOV profile (see docs/CONFORMANCE.md).',
  required: ['specversion', 'id', 'source', 'type'],
  properties: {
    specversion: { type: 'string', enum: ['1.0'] },
    id: { type: 'string', minLength: 1 },
    source: {
      type: 'string',
      format: 'uri-reference',
      minLength: 1,
      example: 'urn:nld:oin:00000001234567890000:systeem:leerlingadministratie',
    },
    type: { type: 'string', minLength: 1, example: 'nl.edu.leerling.ingeschreven.v1' },
    datacontenttype: { type: 'string' },
    koerierdatadigest: {
      type: 'string',
      description:
        'Set by Koerier (EDU-1) when the data travels by reference: SHA-256 of the data at `dataref`, `sha-256=:<base64>:`. Publishers may not set it.',
    },
    koerierdatasize: {
      type: 'integer',
      description: 'Set by Koerier (EDU-1) with `koerierdatadigest`: the data’s length in bytes.',
    },
    dataschema: { type: 'string', format: 'uri' },
    subject: { type: 'string', minLength: 1 },
    time: { type: 'string', format: 'date-time' },
    dataref: { type: 'string', format: 'uri-reference' },
    sequence: { type: 'string', minLength: 1 },
    sequencetype: { type: 'string', minLength: 1 },
    data: { description: 'Any JSON value.' },
    data_base64: { type: 'string', contentEncoding: 'base64' },
  },
  additionalProperties: { description: 'Extension attributes: names a-z0-9, values string, integer or boolean.' },
} as const;

export const eventsSchemas = {
  CloudEvent: cloudEventSchema,
  Accepted: {
    type: 'object',
    description:
      'The answer is bounded: it is kept whole for replays of the same Idempotency-Key, so it stays within 256 KiB however many events a ' +
      'batch holds and however long their `source` and `id` are. `acceptedCount` always counts every accepted event.',
    required: ['acceptedCount', 'accepted'],
    properties: {
      acceptedCount: {
        type: 'integer',
        minimum: 0,
        description: 'How many events were accepted (all of the request: a batch is all or nothing).',
      },
      accepted: {
        type: 'array',
        description:
          "The accepted events by `source` and `id`, the first ones in request order, as many as fit within the answer's budget (each whole, " +
          'never cut). Ordinary batches are listed entirely; with long sources and ids the rest is counted in `acceptedNotListed`.',
        items: {
          type: 'object',
          required: ['source', 'id'],
          properties: {
            source: { type: 'string' },
            id: { type: 'string' },
            duplicate: {
              type: 'boolean',
              enum: [true],
              description:
                'This `source` + `id` was accepted before within the idempotency window: the event is not delivered again ' +
                '(EDU-IDEM-15, CE-17); GET /events/{source}/{id} names the first acceptance. Best effort: a copy published before ' +
                'the first was routed (milliseconds) is listed without it, and is still not delivered twice.',
            },
          },
        },
      },
      duplicateCount: {
        type: 'integer',
        minimum: 1,
        description: 'How many of the accepted events are marked `duplicate` (listed or not); absent when none is.',
      },
      acceptedNotListed: {
        type: 'integer',
        minimum: 1,
        description:
          'Accepted events after the listed ones that `accepted` does not name; absent when every one is listed.',
      },
      warnings: {
        type: 'array',
        description:
          'SHOULD-level findings: the events were accepted, but do not follow every recommendation of the profile. One entry per kind of ' +
          'finding (with `indexes` in a batch), at most 100 and 64 KiB; the rest is counted in `warningsNotListed`.',
        items: { $ref: '#/components/schemas/ValidationIssue' },
      },
      warningsNotListed: { type: 'integer', minimum: 1, description: 'Warnings left out of `warnings`.' },
    },
  },
} as const;

/**
 * Binary mode (HTTP binding §3.1.3): each attribute in a `ce-` header, the data as the body and
 * `datacontenttype` as Content-Type. Optional as parameters, since structured and batch mode carry
 * none; in binary mode `ce-specversion`, `ce-id`, `ce-source` and `ce-type` are required (CE-3).
 * Extension attributes travel as `ce-<name>` too.
 */
const binaryAttributes: readonly (readonly [string, string, Record<string, unknown>])[] = [
  ['specversion', 'Binary mode, required there: `1.0`.', { type: 'string', enum: ['1.0'] }],
  ['id', 'Binary mode, required there: the event id, unique per source.', { type: 'string', minLength: 1 }],
  [
    'source',
    'Binary mode, required there: a URI reference, e.g. `urn:nld:oin:…:systeem:…`.',
    { type: 'string', minLength: 1 },
  ],
  [
    'type',
    'Binary mode, required there: the event type, e.g. `nl.edu.leerling.ingeschreven.v1`.',
    { type: 'string', minLength: 1 },
  ],
  ['subject', 'Binary mode: the subject of the event.', { type: 'string', minLength: 1 }],
  ['time', 'Binary mode: RFC 3339 timestamp.', { type: 'string', format: 'date-time' }],
  ['dataschema', 'Binary mode: URI of the schema of the data.', { type: 'string', format: 'uri' }],
  [
    'dataref',
    'Binary mode: where the data is, when it is not in the body.',
    { type: 'string', format: 'uri-reference' },
  ],
  ['sequence', 'Binary mode: the order of the event within its source.', { type: 'string', minLength: 1 }],
  ['sequencetype', 'Binary mode: how `sequence` is to be compared.', { type: 'string', minLength: 1 }],
];

const binaryModeHeaders = binaryAttributes.map(([name, description, schema]) => ({
  name: `ce-${name}`,
  in: 'header',
  required: false,
  description,
  schema,
}));

export const eventsPaths = {
  '/events': {
    get: searchEventsOperation,
    post: {
      operationId: 'publishEvents',
      summary: 'Publish CloudEvents',
      description:
        'Accepts one event (structured mode, `application/cloudevents+json`; or binary mode, any Content-Type with `ce-` headers) ' +
        'or a batch (`application/cloudevents-batch+json`, all or nothing). Events are stored in the inbound queue before the ' +
        '202 answer (EDU-19). An event above the inline threshold (64 KiB) keeps its attributes and travels with `dataref` to ' +
        'Koerier’s data URL, `koerierdatadigest` and `koerierdatasize`; its data is fetched at GET /payloads/{id} (EDU-1). ' +
        'Requires the scope `events:publish`.',
      tags: ['Events'],
      security: [{ oauth2: ['events:publish'] }],
      parameters: [idempotencyKeyParameter, ...binaryModeHeaders],
      requestBody: {
        required: true,
        content: {
          'application/cloudevents+json': { schema: { $ref: '#/components/schemas/CloudEvent' } },
          'application/cloudevents-batch+json': {
            schema: { type: 'array', items: { $ref: '#/components/schemas/CloudEvent' } },
          },
          '*/*': { schema: { description: 'Binary mode: the event data; attributes in ce- headers.' } },
        },
      },
      responses: {
        '202': {
          description:
            'Accepted and stored; delivery happens asynchronously. The body counts the accepted events (`acceptedCount`) and names them by ' +
            '`source` and `id` within a 256 KiB budget (`acceptedNotListed` counts those left unnamed).',
          headers: {
            ...versionHeader,
            'Idempotent-Replayed': {
              description: '`true` when this is the stored answer to an earlier request with the same key.',
              schema: { type: 'string' },
            },
          },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Accepted' } } },
        },
        '400': problemResponse(
          'Invalid CloudEvent(s), malformed JSON, a missing or malformed Idempotency-Key, or an event without the key of an ordered subscription that refuses such events (`ordering-key-missing`, issue 33); `errors` lists the violations (at most 100; `errorsNotListed` counts the rest, `validationStopped` says validation ended there).',
        ),
        ...authProblems,
        ...idempotencyProblems,
        '413': problemResponse(
          'An event is larger than the configured limit (default 4 MiB; upload larger data with POST /payloads), or a batch holds more than 1000 events.',
        ),
        '415': problemResponse('The Content-Type is not a CloudEvents format Koerier understands.'),
        '429': problemResponse(
          'The publisher sent more than its limit (KOERIER_PUBLISH_RATE_PER_MINUTE, default 6000 a minute, counted across all containers) or ' +
            'its per-client burst (EDU-20). Nothing was stored; retry after Retry-After with the same Idempotency-Key.',
          { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
        ),
        ...commonProblems,
      },
    },
    options: {
      operationId: 'validateWebhook',
      summary: 'Webhook validation handshake (WH-7)',
      description:
        'Answers the CloudEvents webhook abuse-protection request: an allowed `WebHook-Request-Origin` gets `WebHook-Allowed-Origin` and `WebHook-Allowed-Rate`. No token needed.',
      tags: ['Events'],
      security: [],
      parameters: [{ name: 'WebHook-Request-Origin', in: 'header', required: false, schema: { type: 'string' } }],
      responses: {
        '200': {
          description: 'Consent: deliveries from this origin are welcome at the given rate.',
          headers: {
            ...versionHeader,
            'WebHook-Allowed-Origin': { schema: { type: 'string' } },
            'WebHook-Allowed-Rate': { schema: { type: 'string' } },
          },
        },
        '204': {
          description: 'A plain OPTIONS request: the allowed methods.',
          headers: { ...versionHeader, Allow: { schema: { type: 'string' } } },
        },
        '400': problemResponse('Malformed validation request.'),
        '403': problemResponse('This origin may not deliver to Koerier.'),
      },
    },
  },
} as const;
