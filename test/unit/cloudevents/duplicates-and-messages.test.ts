/**
 * Two things the per-mutant runs of `npm run mutate` otherwise miss (docs/MUTATION.md): the
 * duplicate-member scan at its edges (review #7), and the words of validation errors — what a
 * wrong value is called, and how attribute names are quoted and cut in a message.
 */
import { describe, expect, it } from 'vitest';
import { validateEventObject } from '../../../functions/core/cloudevents/index.js';
import { duplicateMemberName, topLevelMemberCount } from '../../../functions/core/cloudevents/json-spans.js';
import { invalidIssues, nlEvent, parse, structuredRequest } from './fixtures.js';

describe('duplicate member names (review #7)', () => {
  it.each([
    ['a plain repeat', '{"a":1,"b":2,"a":3}', 'a'],
    ['a repeat spelled with an escape', '{"source":"x","\\u0073ource":"y"}', 'source'],
    ['whitespace around every token', '{ "a" : 1 ,\n "b" :\t2 ,\r\n "a" : 3 }', 'a'],
    ['values with escaped quotes and backslashes', '{"a":"x\\"y","b":"z\\\\","a":1}', 'a'],
    ['literal and number values', '{"a":true,"b":null,"c":-1.5e3,"a":0}', 'a'],
    ['nested objects and arrays in between', '{"a":{"x":[1,{"y":2}]},"b":[{"c":1}],"a":2}', 'a'],
  ])('review #7: %s is found', (_what, text, name) => {
    expect(duplicateMemberName(text)).toBe(name);
  });

  it.each([
    ['distinct names', '{"a":1,"b":2}'],
    ['an empty object', '{}'],
    ['an empty object with whitespace', ' { \n } '],
    ['not an object', '[{"a":1,"a":2}]'],
    ['repeats only inside nested values', '{"a":{"b":1,"b":2},"c":[{"d":1,"d":2}]}'],
    ['a member without its colon', '{"a" 1,"a":2}'],
    ['members without a comma', '{"a":1 "a":2}'],
    ['names that differ only by an escaped quote', '{"a\\"":1,"a":2}'],
    // Strings that read as `:` and `,` once their quotes are taken for a member name's.
    ['an array of strings shaped like members', '[4,":,,,"]'],
  ])('review #7: %s has none', (_what, text) => {
    expect(duplicateMemberName(text)).toBeUndefined();
  });

  it('review #7: the scan starts where it is told, skipping whitespace there', () => {
    expect(duplicateMemberName('[1, \n {"a":1,"a":2}]', 4)).toBe('a');
    expect(duplicateMemberName('xx{"a":1,"b":2}', 2)).toBeUndefined();
    // An empty object ends the scan at its brace, whatever text follows it.
    expect(duplicateMemberName('[{},":,:,"]', 1)).toBeUndefined();
  });
});

describe('issue 15: duplicates found by counting members against the parsed keys', () => {
  it.each([
    ['{"a":1,"b":2,"a":3}', 3],
    ['{"source":"x","\\u0073ource":"y"}', 2],
    ['{ "a" : 1 ,\n "b" :\t2 ,\r\n "a" : 3 }', 3],
    ['{"a":"x\\"y","b":"z\\\\","a":1}', 3],
    ['{"a":{"x":[1,{"y":2}]},"b":[{"c":1}],"a":2}', 3],
    ['{"a":{"b":1,"b":2},"c":[{"d":1,"d":2}]}', 2],
    [' { \n } ', 0],
    ['[{"a":1}]', 0],
  ])('review #7, issue 15: %s holds %i top-level members', (text, count) => {
    expect(topLevelMemberCount(text)).toBe(count);
  });

  it('review #7, issue 15: the count starts where it is told', () => {
    expect(topLevelMemberCount('[1, \n {"a":1,"a":2}]', 4)).toBe(2);
  });

  it('HTTP-1, review #7, issue 15: a repeated object-valued data member and a repeated __proto__ are found', () => {
    const head = '{"specversion":"1.0","id":"1","source":"urn:nld:x","type":"nl.x.y"';
    expect(invalidIssues(parse(structuredRequest(`${head},"data":{"a":[1]},"data":{"a":[1]}}`)))).toEqual([
      'HTTP-1 duplicate-member data',
    ]);
    expect(invalidIssues(parse(structuredRequest(`${head},"__proto__":"a","__proto__":"b"}`)))).toContain(
      'HTTP-1 duplicate-member __proto__',
    );
  });
});

describe('validation messages', () => {
  const messageFor = (event: Record<string, unknown>, attribute: string) =>
    validateEventObject(event).errors.find((e) => e.attribute === attribute)?.message;

  it.each([
    [[], 'an array'],
    [5, 'a number'],
    [5.5, 'a non-integer number'],
    [{ a: 1 }, 'a JSON object'],
    [true, 'a boolean'],
  ])('CE-2: a required string given %j is called %s', (value, called) => {
    expect(messageFor(nlEvent({ id: value }), 'id')).toBe(`id must be a JSON string, not ${called}.`);
  });

  it('CE-1: an attribute name in a message is JSON-escaped and cut after 64 characters', () => {
    const long = 'A'.repeat(70);
    expect(messageFor(nlEvent({ [long]: 'x' }), long)).toContain(`'${'A'.repeat(64)}…'`);
    const exact = 'B'.repeat(64);
    expect(messageFor(nlEvent({ [exact]: 'x' }), exact)).toContain(`'${exact}'`);
    expect(messageFor(nlEvent({ 'bad"name': 'x' }), 'bad"name')).toContain(`'bad\\"name'`);
  });

  it('CE-3, CE-4, CE-6: the messages say what a valid value looks like', () => {
    expect(messageFor(nlEvent({ id: '' }), 'id')).toBe('id must be a non-empty string.');
    expect(messageFor(nlEvent({ type: '' }), 'type')).toBe('type must be a non-empty string.');
    expect(messageFor(nlEvent({ source: '' }), 'source')).toMatch(/^source must be a non-empty URI-reference/);
    const missing = validateEventObject({ specversion: '1.0', type: 't.x', source: 'urn:nld:x' }).errors.find(
      (e) => e.rule === 'required',
    );
    expect(missing?.message).toBe('id is required.');
  });
});
