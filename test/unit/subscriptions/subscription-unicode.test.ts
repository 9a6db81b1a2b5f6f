import { describe, expect, it } from 'vitest';
import {
  MAX_CONDITIONS_BYTES,
  parseSubscriptionInput,
  type InputRules,
} from '../../../functions/core/subscriptions/subscription-input.js';

const rules: InputRules = {
  allowLoopbackSinks: false,
  allowedPorts: [443],
  sinkCredentials: 'oauth2-only',
  storedCredential: 'oauth2-client-credentials',
  maxRetryWindowSeconds: 7 * 24 * 3600,
};
const valid = { sink: 'https://ontvanger.example/webhook', types: ['nl.edu.x.v1'] };
const rulesOf = (body: unknown) =>
  parseSubscriptionInput(body, rules).issues.map((issue) => `${issue.attribute}:${issue.rule}`);

/**
 * A JSON string may hold an unpaired surrogate (`"\ud800"`), which no UTF-8 text can: DynamoDB
 * would store U+FFFD instead, and route keys and URLs cannot be built from it (a 500 before).
 * Like the ingest's string-characters rule (CE-2), subscription input refuses them with a 400.
 */
describe('review #1, fuzz: subscription input that is not well-formed Unicode', () => {
  it('EDU-14, review #1: an unpaired surrogate in source, a type, a filter value or name, or a credential → string-characters', () => {
    expect(rulesOf({ ...valid, source: '\ud800' })).toEqual(['source:string-characters']);
    expect(rulesOf({ ...valid, source: 'urn:nld:oin:1:\udc00' })).toEqual(['source:string-characters']);
    expect(rulesOf({ ...valid, types: ['nl.edu.x.v1', 'nl.\udfff\ud800'] })).toEqual(['types:string-characters']);
    expect(rulesOf({ ...valid, filters: [{ exact: { subject: 'a\ud800' } }] })).toEqual(['filters:string-characters']);
    expect(rulesOf({ ...valid, filters: [{ any: [{ not: { exact: { subject: '\ud800' } } }] }] })).toContain(
      'filters:string-characters',
    );
    expect(rulesOf({ ...valid, filters: [{ exact: { ['x\ud800']: 'a' } }] })).toContain('filters:string-characters');
    expect(
      rulesOf({
        ...valid,
        sinkcredential: {
          credentialtype: 'CLIENTCREDENTIALS',
          tokenurl: 'https://idp.example/token',
          clientid: 'k',
          clientsecret: 'geheim\ud800',
        },
      }),
    ).toContain('sinkcredential:string-characters');
  });

  it('EDU-14, review #1: proper surrogate pairs (emoji) and other Unicode stay accepted', () => {
    expect(
      rulesOf({
        ...valid,
        source: 'urn:nld:oin:1:systeem:😀',
        filters: [{ exact: { subject: 'leerling ünïcödé 👩‍👩‍👧' } }],
      }),
    ).toEqual([]);
  });

  it('EDU-14, review #1: a deeply nested value is walked without recursion', () => {
    let deep: unknown = '\ud800';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(rulesOf({ ...valid, filters: deep })).toContain('filters:string-characters');
  });
});

/**
 * The conditions' budget (`MAX_CONDITIONS_BYTES`) is counted in UTF-8 bytes of their JSON form, as
 * the subscription item and every route index item store them, not in characters: a control
 * character is one character but a six-byte `\u00XX` escape in JSON. Types alone can pass the
 * budget then, which an earlier explanation of a surviving mutant held impossible (issue 36, item 11).
 */
describe('issue 36, item 11: the conditions budget counts the bytes of the stored JSON', () => {
  // 32 types (the most) of 1,021 control characters each: 32,672 characters, but 196 KB as JSON.
  const controlTypes = Array.from({ length: 32 }, (_, i) => `${String.fromCharCode(0x0e + (i % 16))}`.repeat(1021));
  const sizeOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

  it('EDU-14, issue 36 item 11: 32 types of 1,021 control characters pass the budget as JSON, and the too-large issue names types (push and pull)', () => {
    expect(controlTypes.join('').length).toBeLessThan(MAX_CONDITIONS_BYTES / 4);
    expect(sizeOf([undefined, controlTypes, undefined])).toBeGreaterThan(MAX_CONDITIONS_BYTES);
    expect(rulesOf({ sink: valid.sink, types: controlTypes })).toEqual(['types:too-large']);
    expect(rulesOf({ delivery: 'pull', types: controlTypes })).toEqual(['types:too-large']);
    // With filters too, the filters are named: they are what can be narrowed without limit.
    expect(rulesOf({ sink: valid.sink, types: controlTypes, filters: [{ prefix: { subject: 'a' } }] })).toEqual([
      'filters:too-large',
    ]);
    expect(rulesOf({ delivery: 'pull', types: controlTypes, filters: [{ prefix: { subject: 'a' } }] })).toEqual([
      'filters:too-large',
    ]);
  });

  it('EDU-14, issue 36 item 11: printable types of the same length stay within the budget, and escapes count up to it exactly', () => {
    expect(rulesOf({ sink: valid.sink, types: controlTypes.map((type) => 'a'.repeat(type.length)) })).toEqual([]);
    // Escaped types, padded with printable ones: the budget holds to the byte.
    const fill = (target: number) => {
      const types = controlTypes.slice(0, 20);
      while (target - sizeOf([undefined, [...types, 'x'], undefined]) >= 1024) types.push('x'.repeat(1024));
      types.push('x'.repeat(target - sizeOf([undefined, [...types, ''], undefined])));
      return types;
    };
    expect(sizeOf([undefined, fill(MAX_CONDITIONS_BYTES), undefined])).toBe(MAX_CONDITIONS_BYTES);
    expect(rulesOf({ sink: valid.sink, types: fill(MAX_CONDITIONS_BYTES) })).toEqual([]);
    expect(rulesOf({ sink: valid.sink, types: fill(MAX_CONDITIONS_BYTES + 1) })).toEqual(['types:too-large']);
    // Bytes, not characters: two-byte letters pass the budget while the JSON text has fewer characters.
    const accented = [...controlTypes.slice(0, 20), ...Array.from({ length: 5 }, () => 'é'.repeat(1024))];
    expect(JSON.stringify([undefined, accented, undefined]).length).toBeLessThan(MAX_CONDITIONS_BYTES);
    expect(sizeOf([undefined, accented, undefined])).toBeGreaterThan(MAX_CONDITIONS_BYTES);
    expect(rulesOf({ sink: valid.sink, types: accented })).toEqual(['types:too-large']);
    expect(rulesOf({ delivery: 'pull', types: accented })).toEqual(['types:too-large']);
  });
});
