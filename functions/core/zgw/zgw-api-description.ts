/**
 * The API description of the ZGW Notificaties API adapter (issue 34), served at
 * GET /zgw/api/v1/schema/openapi.json. Written for Koerier: it describes the API the VNG
 * Notificaties API standard and Open Notificaties 1.16 serve — the same paths, operations, resource
 * shapes, status codes and the ZGW error body — and adds what is Koerier's (the mapping to
 * CloudEvents, which CloudEvents reach notificatie subscribers, where the secret is set).
 * test/unit/zgw/zgw-api-description.test.ts holds it against Open Notificaties' own document: every
 * path, operation and schema member of theirs is here.
 */
import { ZGW_TYPE_PREFIX } from './notificatie-mapping.js';

const string = (description: string, extra: Record<string, unknown> = {}) => ({
  type: 'string',
  description,
  ...extra,
});
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const stringMap = (description: string) => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string', maxLength: 1000 },
});

const KANAAL_MEMBERS = {
  url: string('Where this kanaal is read.', { format: 'uri', readOnly: true, minLength: 1, maxLength: 1000 }),
  naam: string("The kanaal's unique name; the second part of its CloudEvent types (`nl.overheid.<naam>.…`).", {
    maxLength: 50,
  }),
  documentatieLink: string('Where the notificaties of this kanaal are documented.', { format: 'uri', maxLength: 200 }),
  filters: {
    type: 'array',
    items: { type: 'string', maxLength: 100 },
    description: 'The kenmerken notificaties on this kanaal may carry, and abonnementen may filter on.',
  },
};

const ABONNEMENT_MEMBERS = {
  url: KANAAL_MEMBERS.url,
  callbackUrl: string("Where notificaties are posted (the Koerier push subscription's sink).", {
    format: 'uri',
    maxLength: 200,
  }),
  auth: string('The exact `Authorization` header value every delivery carries. Write-only, stored encrypted.', {
    writeOnly: true,
    maxLength: 1000,
  }),
  kanalen: { type: 'array', items: ref('FilterGroup'), description: 'The kanalen, with filters, subscribed to.' },
  sendCloudevents: { type: 'boolean', description: 'Deliver the CloudEvent (NL GOV) instead of the notificatie.' },
  cloudeventFilters: {
    type: 'array',
    items: ref('CloudEventFilterGroup'),
    description: 'Refused (400 `cloudevent-filters-not-supported`): subscribe through /v1/subscriptions instead.',
  },
};

const schemas = {
  Kanaal: { type: 'object', properties: KANAAL_MEMBERS, required: ['naam'] },
  PatchedKanaal: { type: 'object', properties: KANAAL_MEMBERS },
  FilterGroup: {
    type: 'object',
    properties: {
      filters: stringMap('Kenmerk values a notificatie must hold (`*`: any) to be delivered.'),
      naam: string('The name of the kanaal subscribed to.'),
    },
    required: ['naam'],
  },
  CloudEventFilterGroup: {
    type: 'object',
    properties: {
      typeSubstring: string('A part of the CloudEvent types subscribed to.', { maxLength: 255 }),
      filters: stringMap("Values the event's data members must hold."),
    },
    required: ['typeSubstring'],
  },
  Abonnement: { type: 'object', properties: ABONNEMENT_MEMBERS, required: ['auth', 'callbackUrl'] },
  PatchedAbonnement: { type: 'object', properties: ABONNEMENT_MEMBERS },
  Message: {
    type: 'object',
    description:
      `A notificatie. In Koerier it is a CloudEvent: type \`${ZGW_TYPE_PREFIX}<kanaal>.<resource>.<actie>\`, source the ` +
      "publishing client's registered source (its first publish grant), subject the last path segment of `resourceUrl`, time " +
      '`aanmaakdatum`, the whole notificatie in `data`, and its kenmerken once more in the extension attribute ' +
      '`zgwkenmerken` (JSON text), which the filters of abonnementen read when `data` is in the claim check (docs/ZGW.md).',
    properties: {
      kanaal: string('The kanaal it is published on.', { maxLength: 50 }),
      source: string("Who it comes from, as the publisher names itself (kept in the CloudEvent's data).", {
        maxLength: 100,
      }),
      hoofdObject: string('The main object the resource belongs to.', { format: 'uri' }),
      resource: string('The kind of resource.', { maxLength: 100 }),
      resourceUrl: string('The resource.', { format: 'uri' }),
      actie: string('What was done to it.', { maxLength: 100 }),
      aanmaakdatum: string('When.', { format: 'date-time' }),
      kenmerken: stringMap("Its kenmerken: names within the kanaal's filters."),
    },
    required: ['aanmaakdatum', 'actie', 'hoofdObject', 'kanaal', 'resource', 'resourceUrl'],
  },
  CloudEvent: {
    type: 'object',
    description:
      'A CloudEvent (JSON format); Koerier checks it as on POST /v1/events (NL GOV profile, publish grants).',
    properties: {
      intId: { type: 'integer', readOnly: true, description: 'Not used by Koerier.' },
      id: string('Unique per source.', { maxLength: 255 }),
      source: string("Within the client's publish grants.", { format: 'uri-reference' }),
      specversion: string('`1.0`.', { maxLength: 50, pattern: '^(\\d+)\\.(\\d+)' }),
      type: string('The event type.', { maxLength: 255 }),
      datacontenttype: string('The media type of `data`.', { maxLength: 255 }),
      dataschema: string('The schema `data` follows.', { format: 'uri' }),
      subject: string('What the event is about.', { maxLength: 255 }),
      time: string('When it happened.', { format: 'date-time', nullable: true }),
      data: { nullable: true, description: 'The event data.' },
    },
    required: ['id', 'source', 'specversion', 'type'],
  },
  Fout: {
    type: 'object',
    description: 'The ZGW error body of every refusal.',
    properties: {
      type: string('Where the kind of error is described.'),
      code: string('What went wrong, for programs (e.g. `jwt-expired`, `permission_denied`).'),
      title: string('What went wrong, in words.'),
      status: { type: 'integer', description: 'The HTTP status.' },
      detail: string('More about this occurrence.'),
      instance: string('This occurrence (`urn:uuid:…`), for the logs.'),
    },
    required: ['code', 'detail', 'instance', 'status', 'title'],
  },
  FieldValidationError: {
    type: 'object',
    properties: {
      name: string('The field (nested fields dotted).'),
      code: string('What is wrong, for programs (e.g. `required`, `kenmerken_inconsistent`).'),
      reason: string('What is wrong, in words.'),
    },
    required: ['code', 'name', 'reason'],
  },
  ValidatieFout: {
    type: 'object',
    description: 'The ZGW error body of a 400: `Fout` with the fields that are wrong.',
    properties: {
      type: string('Where the kind of error is described.'),
      code: string('What went wrong, for programs.'),
      title: string('What went wrong, in words.'),
      status: { type: 'integer', description: 'The HTTP status.' },
      detail: string('More about this occurrence.'),
      instance: string('This occurrence (`urn:uuid:…`).'),
      invalidParams: { type: 'array', items: ref('FieldValidationError') },
    },
    required: ['code', 'detail', 'instance', 'invalidParams', 'status', 'title'],
  },
};

const ERROR_STATUSES: Readonly<Record<string, string>> = {
  '401': 'Unauthorized',
  '403': 'Forbidden: no or a bad token (wrong secret, expired, unknown client), or a scope missing',
  '406': 'Not acceptable',
  '409': 'Conflict',
  '410': 'Gone',
  '415': 'Unsupported media type',
  '429': 'Too many requests from this client (its publish or management rate; Retry-After says when to retry)',
  '500': 'Internal server error',
};

const json = (schema: unknown, media = 'application/json') => ({ content: { [media]: { schema } } });

function operation(
  operationId: string,
  summary: string,
  scopes: string,
  success: Record<string, unknown>,
  options: { body?: string; media?: string; uuid?: boolean; query?: boolean } = {},
) {
  const responses: Record<string, unknown> = {
    ...success,
    '400': { description: 'Bad request', ...json(ref('ValidatieFout'), 'application/problem+json') },
    ...(options.uuid ? { '404': { description: 'Not found', ...json(ref('Fout'), 'application/problem+json') } } : {}),
    ...Object.fromEntries(
      Object.entries(ERROR_STATUSES).map(([status, description]) => [
        status,
        { description, ...json(ref('Fout'), 'application/problem+json') },
      ]),
    ),
  };
  const parameters = [
    ...(options.uuid
      ? [
          {
            in: 'path',
            name: 'uuid',
            required: true,
            schema: { type: 'string', format: 'uuid' },
            description: "The resource's UUID.",
          },
        ]
      : []),
    ...(options.query
      ? [{ in: 'query', name: 'naam', schema: { type: 'string' }, description: 'Only the kanaal of this name.' }]
      : []),
  ];
  return {
    operationId,
    summary,
    tags: [operationId.split('_')[0]],
    security: [{ 'JWT-Claims': [scopes] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(options.body ? { requestBody: { required: true, ...json(ref(options.body), options.media) } } : {}),
    responses,
  };
}

const ok = (schema: unknown) => ({ '200': { description: 'OK', ...json(schema) } });
const created = (schema: unknown, media?: string) => ({ '201': { description: 'Created', ...json(schema, media) } });
const EITHER = '(notificaties.consumeren | notificaties.publiceren)';
const PUBLISH = 'notificaties.publiceren';
const CONSUME = 'notificaties.consumeren';

/** The document, its server the adapter's base URL (`https://…/zgw/api/v1`). */
export function zgwApiDescription(baseUrl: string) {
  return {
    openapi: '3.0.3',
    info: {
      title: 'Koerier: ZGW Notificaties API',
      version: '1.0.0',
      description:
        'The VNG Notificaties API (ZGW), as Open Notificaties serves it, on Koerier. Clients sign their own JWT with HS256 ' +
        '(`client_id`, `iat`; at most an hour old by default) with the secret set on their partner in Koerier ' +
        '(`PUT /v1/clients/{clientId}`, `zgwSecret`). `notificaties.publiceren` is held by partners with publish grants, ' +
        '`notificaties.consumeren` by partners with entitlements. Every notificatie is a CloudEvent in Koerier; an ' +
        `abonnement receives as notificaties the CloudEvents of its kanalen, including those others publish on POST /v1/events ` +
        `whose type is \`${ZGW_TYPE_PREFIX}<kanaal>.<resource>.<actie>\` and whose data holds \`resourceUrl\` and ` +
        '`hoofdObject` URLs; other CloudEvents reach CloudEvents subscribers only. The mapping both ways is docs/ZGW.md.',
    },
    servers: [{ url: baseUrl }],
    tags: [{ name: 'abonnement' }, { name: 'kanaal' }, { name: 'notificaties' }, { name: 'cloudevents' }],
    paths: {
      '/abonnement': {
        get: operation('abonnement_list', 'Every abonnement.', EITHER, ok({ type: 'array', items: ref('Abonnement') })),
        post: operation(
          'abonnement_create',
          'Make an abonnement (its callback is checked first).',
          CONSUME,
          created(ref('Abonnement')),
          {
            body: 'Abonnement',
          },
        ),
      },
      '/abonnement/{uuid}': {
        get: operation('abonnement_read', 'One abonnement.', EITHER, ok(ref('Abonnement')), { uuid: true }),
        put: operation('abonnement_update', 'Replace an abonnement.', CONSUME, ok(ref('Abonnement')), {
          uuid: true,
          body: 'Abonnement',
        }),
        patch: operation('abonnement_partial_update', 'Change part of an abonnement.', CONSUME, ok(ref('Abonnement')), {
          uuid: true,
          body: 'PatchedAbonnement',
        }),
        delete: operation(
          'abonnement_delete',
          'End an abonnement.',
          CONSUME,
          { '204': { description: 'No content' } },
          { uuid: true },
        ),
      },
      '/cloudevents': {
        post: operation(
          'cloudevent_create',
          'Publish a CloudEvent (as POST /v1/events).',
          PUBLISH,
          created(ref('CloudEvent'), 'application/cloudevents+json'),
          {
            body: 'CloudEvent',
            media: 'application/cloudevents+json',
          },
        ),
      },
      '/kanaal': {
        get: operation('kanaal_list', 'Every kanaal.', EITHER, ok({ type: 'array', items: ref('Kanaal') }), {
          query: true,
        }),
        post: operation('kanaal_create', 'Make a kanaal.', PUBLISH, created(ref('Kanaal')), { body: 'Kanaal' }),
      },
      '/kanaal/{uuid}': {
        get: operation('kanaal_read', 'One kanaal.', EITHER, ok(ref('Kanaal')), { uuid: true }),
        put: operation('kanaal_update', 'Replace a kanaal (not its name).', PUBLISH, ok(ref('Kanaal')), {
          uuid: true,
          body: 'Kanaal',
        }),
        patch: operation('kanaal_partial_update', 'Change part of a kanaal.', PUBLISH, ok(ref('Kanaal')), {
          uuid: true,
          body: 'PatchedKanaal',
        }),
      },
      '/notificaties': {
        post: operation(
          'notificaties_create',
          'Publish a notificatie: it becomes a CloudEvent in Koerier.',
          PUBLISH,
          created(ref('Message')),
          {
            body: 'Message',
          },
        ),
      },
      '/schema/openapi.json': {
        get: {
          operationId: 'koerier_schema',
          summary: 'This description (Koerier).',
          tags: ['schema'],
          security: [],
          responses: { '200': { description: 'OK', ...json({ type: 'object' }) } },
        },
      },
    },
    components: { schemas, securitySchemes: { 'JWT-Claims': { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
  };
}
