/**
 * The filter expression as the API description shows it (`Filter`, `AttributeMatch`; issue 29
 * item 2): one TypeBox schema, recursive through all/any/not, built from the limits the dialects
 * are checked with (filters.ts's FILTER_LIMITS and attribute-name pattern, CESQL's 4,096 bytes).
 * The subscription and replay bodies refer to it; `parseFilters` checks filters, because their
 * issues name a place (`filters[0].all[1].exact.type`) and rules the Subscriptions API's clients
 * know (`unsupported-dialect`, …), and because some limits are no JSON Schema keyword: 8 levels,
 * 64 expressions in all, an expression that parses. test/unit/subscriptions/filter-schema.test.ts
 * holds this schema and parseFilters to the same verdict.
 */
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (core/http/json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { CESQL_LIMITS } from '../cesql/index.js';
import { requestBody } from '../http/json-body.js';
import { ATTRIBUTE_NAME_PATTERN, FILTER_DIALECTS, FILTER_LIMITS } from './filters.js';

/** exact/prefix/suffix: attribute name → the value to compare with. */
const ATTRIBUTE_MATCH = Type.Record(
  Type.String({ pattern: ATTRIBUTE_NAME_PATTERN }),
  Type.String({ minLength: 1, maxLength: FILTER_LIMITS.maxValueLength }),
  { minProperties: 1, additionalProperties: false },
);

const DESCRIPTION =
  'A CloudEvents Subscriptions API filter expression: exactly one of the dialects ' +
  `${FILTER_DIALECTS.join(', ')}. exact/prefix/suffix map attribute names to non-empty strings (all must match, case sensitive); ` +
  'all/any hold a non-empty list of filters; not holds one; sql holds a CloudEvents SQL (CESQL v1.0.0) expression over the ' +
  'context attributes (never data), which matches when it evaluates to true without an error. An invalid expression is a 400 ' +
  `naming the position and what was expected there (at most ${CESQL_LIMITS.maxBytes} bytes, ${CESQL_LIMITS.maxDepth} levels of nesting; AND, OR and XOR mixed need ` +
  "parentheses). Conditions an expression pins (type = '…', type IN (…), type LIKE 'prefix%', or a conjunction holding one) " +
  'index the subscription as exact and prefix filters do; an expression that pins nothing is evaluated for every event the ' +
  `subscriber is entitled to. Filters nest at most ${FILTER_LIMITS.maxDepth} levels, and a subscription holds at most ` +
  `${FILTER_LIMITS.maxNodes} expressions in all. Any other dialect is rejected with 400.`;

/** `Filter`: its `$id` names the component, so the description refers to it as `#/components/schemas/Filter`. */
export const FILTER = requestBody({
  schema: Type.Recursive(
    (filter) =>
      Type.Object(
        {
          exact: Type.Optional(ATTRIBUTE_MATCH),
          prefix: Type.Optional(ATTRIBUTE_MATCH),
          suffix: Type.Optional(ATTRIBUTE_MATCH),
          all: Type.Optional(Type.Array(filter, { minItems: 1 })),
          any: Type.Optional(Type.Array(filter, { minItems: 1 })),
          not: Type.Optional(filter),
          sql: Type.Optional(
            Type.String({
              minLength: 1,
              // CESQL counts UTF-8 bytes; no text of more characters has fewer bytes.
              maxLength: CESQL_LIMITS.maxBytes,
              description: `A CESQL v1.0.0 expression (issue 32) of at most ${CESQL_LIMITS.maxBytes} bytes (UTF-8), e.g. type LIKE 'nl.edu.leerling.%' AND EXISTS schoolcode.`,
              example: "type LIKE 'nl.edu.leerling.%' AND schoolcode IN ('12AB', '34CD')",
            }),
          ),
        },
        {
          minProperties: 1,
          maxProperties: 1,
          additionalProperties: false,
          description: DESCRIPTION,
          example: { all: [{ prefix: { type: 'nl.edu.leerling.' } }, { exact: { subject: 'leerling/42' } }] },
        },
      ),
    { $id: 'Filter' },
  ),
  problemType: 'invalid-subscription',
  requirement: 'EDU-14',
});

/** `AttributeMatch`, shown on its own for the clients that read exact, prefix and suffix. */
export const ATTRIBUTE_MATCH_BODY = requestBody({
  schema: ATTRIBUTE_MATCH,
  problemType: 'invalid-subscription',
  requirement: 'EDU-14',
});

/** A list of filters in a body: described by `Filter`, checked by `parseFilters` after the schema. */
export const filtersMember = (options: { readonly description: string; readonly maxItems?: number }) =>
  Type.Array(Type.Unknown({ $ref: '#/components/schemas/Filter' }), options);
