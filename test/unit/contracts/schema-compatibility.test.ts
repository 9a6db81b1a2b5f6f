/**
 * Compatibility verdicts of message payload schemas (issue 14, item 2): backward = old events
 * valid under the new schema, forward = new events valid under the old one, on real changes.
 */
import { describe, expect, it } from 'vitest';
import { compareSchemas, type JsonSchema } from '../../../functions/core/contracts/schema-compatibility.js';

const enrolment = (extra: Record<string, unknown> = {}, required: string[] = ['student']): JsonSchema => ({
  type: 'object',
  required,
  properties: { student: { type: 'string' }, school: { type: 'string' }, ...extra },
});
const closed = (schema: JsonSchema): JsonSchema => ({ ...(schema as object), additionalProperties: false });

describe('JSON Schema compatibility verdicts (EDU-21, issue 14 item 2)', () => {
  it('EDU-21: the same schema is identical, and one that only changes annotations is fully compatible', () => {
    expect(compareSchemas(enrolment(), enrolment()).verdict).toBe('identical');
    const annotated = enrolment({ school: { type: 'string', description: 'BRIN code', examples: ['00AA'] } });
    expect(compareSchemas(enrolment(), annotated)).toMatchObject({ verdict: 'full', findings: [] });
  });

  it('EDU-21: an optional field added to a closed object is backward compatible only (old consumers would refuse it)', () => {
    const result = compareSchemas(closed(enrolment()), closed(enrolment({ nickname: { type: 'string' } })));
    expect(result.verdict).toBe('backward');
    expect(result.findings).toEqual([
      expect.objectContaining({ direction: 'forward', pointer: '/nickname', change: 'property-removed' }),
    ]);
  });

  it('EDU-21: an optional field added to an open object is forward compatible only: an old event may carry that member with another type', () => {
    const result = compareSchemas(enrolment(), enrolment({ nickname: { type: 'string' } }));
    expect(result.verdict).toBe('forward');
    expect(result.findings).toEqual([
      expect.objectContaining({ direction: 'backward', pointer: '/nickname', change: 'property-constrained' }),
    ]);
  });

  it('EDU-21: a required field added is not backward compatible (old events lack it) but forward compatible on an open object', () => {
    const result = compareSchemas(enrolment(), { ...(enrolment() as object), required: ['student', 'school'] });
    expect(result.verdict).toBe('forward');
    expect(result.findings).toEqual([
      expect.objectContaining({ direction: 'backward', pointer: '/school', change: 'required-added' }),
    ]);
  });

  it('EDU-21: a required field added to a closed object is breaking', () => {
    const result = compareSchemas(
      closed(enrolment()),
      closed(enrolment({ nickname: { type: 'string' } }, ['student', 'nickname'])),
    );
    expect(result.verdict).toBe('breaking');
  });

  it('EDU-21: a field removed from an open object is backward compatible only (new events may use the name for anything)', () => {
    const previous = enrolment();
    const next: JsonSchema = { type: 'object', required: ['student'], properties: { student: { type: 'string' } } };
    const result = compareSchemas(previous, next);
    expect(result.verdict).toBe('backward');
    expect(result.findings).toEqual([expect.objectContaining({ direction: 'forward', pointer: '/school' })]);
  });

  it('EDU-21: a required field removed from a closed object is breaking', () => {
    const previous = closed(enrolment({}, ['student', 'school']));
    const next = closed({ type: 'object', required: ['student'], properties: { student: { type: 'string' } } });
    expect(compareSchemas(previous, next).verdict).toBe('breaking');
  });

  it('EDU-21: a type change is breaking, in both directions at the member', () => {
    const result = compareSchemas(enrolment(), enrolment({ school: { type: 'integer' } }));
    expect(result.verdict).toBe('breaking');
    expect(
      result.findings
        .filter((finding) => finding.pointer === '/school')
        .map((finding) => [finding.direction, finding.change]),
    ).toEqual([
      ['backward', 'type-changed'],
      ['forward', 'type-changed'],
    ]);
  });

  it('EDU-21: integer widened to number is backward compatible, number narrowed to integer forward compatible', () => {
    const withAge = (type: string) => enrolment({ age: { type } });
    expect(compareSchemas(withAge('integer'), withAge('number')).verdict).toBe('backward');
    expect(compareSchemas(withAge('number'), withAge('integer')).verdict).toBe('forward');
  });

  it('EDU-21: an enum narrowed is forward compatible only, naming the value that is refused now; widened is backward compatible', () => {
    const withLevel = (values: string[]) => enrolment({ level: { type: 'string', enum: values } });
    const narrowed = compareSchemas(withLevel(['vo', 'mbo', 'hbo']), withLevel(['vo', 'mbo']));
    expect(narrowed.verdict).toBe('forward');
    expect(narrowed.findings).toEqual([
      expect.objectContaining({
        direction: 'backward',
        pointer: '/level',
        change: 'enum-value-refused',
        message: expect.stringContaining('"hbo"'),
      }),
    ]);
    expect(compareSchemas(withLevel(['vo']), withLevel(['vo', 'mbo'])).verdict).toBe('backward');
  });

  it('EDU-21: an enum introduced on a free string is forward compatible only', () => {
    expect(compareSchemas(enrolment(), enrolment({ school: { type: 'string', enum: ['00AA'] } })).verdict).toBe(
      'forward',
    );
  });

  it('EDU-21: additionalProperties closed is forward compatible only; opened again backward compatible only', () => {
    expect(compareSchemas(enrolment(), closed(enrolment())).verdict).toBe('forward');
    expect(compareSchemas(closed(enrolment()), enrolment()).verdict).toBe('backward');
  });

  it('EDU-21: additionalProperties given a schema is compared as a schema for every undeclared member', () => {
    const typed = (type: string) => ({ ...(enrolment() as object), additionalProperties: { type } });
    expect(compareSchemas(typed('string'), typed('string')).verdict).toBe('identical');
    expect(compareSchemas(typed('string'), typed('integer')).verdict).toBe('breaking');
    expect(compareSchemas(typed('string'), enrolment()).verdict).toBe('backward');
  });

  it('EDU-21: $ref is followed inside the document: the same change through a reference has the same verdict', () => {
    const viaRef = (schoolType: string): JsonSchema => ({
      $defs: { School: { type: schoolType } },
      type: 'object',
      properties: { student: { type: 'string' }, school: { $ref: '#/$defs/School' } },
    });
    expect(compareSchemas(viaRef('string'), viaRef('string')).verdict).toBe('identical');
    expect(compareSchemas(viaRef('string'), viaRef('integer')).verdict).toBe('breaking');
    // A reference and the schema it points at, written out, accept the same values.
    const inline: JsonSchema = {
      type: 'object',
      properties: { student: { type: 'string' }, school: { type: 'string' } },
    };
    expect(compareSchemas(viaRef('string'), inline).verdict).toBe('full');
  });

  it('EDU-21: recursive schemas (a dereferenced graph with a cycle) are compared without looping', () => {
    const node = (labelType: string) => {
      const schema: Record<string, unknown> = { type: 'object', properties: { label: { type: labelType } } };
      (schema['properties'] as Record<string, unknown>)['children'] = { type: 'array', items: schema };
      return schema;
    };
    expect(compareSchemas(node('string'), node('string')).backward).toBe(true);
    expect(compareSchemas(node('string'), node('integer')).verdict).toBe('breaking');
  });

  it('EDU-21: a tightened bound (maxLength lower, minimum higher) is forward compatible only', () => {
    const named = (maxLength: number) => enrolment({ student: { type: 'string', maxLength } });
    expect(compareSchemas(named(64), named(32)).verdict).toBe('forward');
    expect(compareSchemas(named(32), named(64)).verdict).toBe('backward');
    const aged = (minimum: number) => enrolment({ age: { type: 'integer', minimum } });
    expect(compareSchemas(aged(4), aged(12)).verdict).toBe('forward');
  });

  it('EDU-21: a keyword the comparison does not model counts as incompatible when it changes, never as compatible', () => {
    const result = compareSchemas(enrolment(), { ...(enrolment() as object), not: { required: ['school'] } });
    expect(result.backward).toBe(false);
    expect(result.findings).toContainEqual(expect.objectContaining({ change: 'unsupported-keyword' }));
  });

  it('EDU-21: anyOf on the new side takes the old schema when one branch does; a branch removed on the old side breaks backward', () => {
    const id = { type: 'string' };
    const number = { type: 'integer' };
    expect(compareSchemas({ anyOf: [id] }, { anyOf: [id, number] }).verdict).toBe('backward');
    expect(compareSchemas({ anyOf: [id, number] }, { anyOf: [id] }).verdict).toBe('forward');
  });

  it('EDU-21: allOf composition is read as one object: a required member added through allOf is seen', () => {
    const base = { type: 'object', properties: { student: { type: 'string' } } };
    const next = { allOf: [base, { required: ['student'] }] };
    expect(compareSchemas(base, next).verdict).toBe('forward');
  });
});
