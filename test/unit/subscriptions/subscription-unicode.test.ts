import { describe, expect, it } from 'vitest';
import { parseSubscriptionInput, type InputRules } from '../../../functions/core/subscriptions/subscription-input.js';

const rules: InputRules = {
  allowLoopbackSinks: false,
  allowedPorts: [443],
  sinkCredentials: 'oauth2-only',
  storedCredential: 'oauth2-client-credentials',
  maxRetryWindowSeconds: 7 * 24 * 3600,
};
const valid = { sink: 'https://ontvanger.example/webhook', types: ['nl.edu.x.v1'] };
const rulesOf = (body: unknown) => parseSubscriptionInput(body, rules).issues.map((issue) => `${issue.attribute}:${issue.rule}`);

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
    expect(rulesOf({ ...valid, filters: [{ any: [{ not: { exact: { subject: '\ud800' } } }] }] })).toContain('filters:string-characters');
    expect(rulesOf({ ...valid, filters: [{ exact: { ['x\ud800']: 'a' } }] })).toContain('filters:string-characters');
    expect(
      rulesOf({
        ...valid,
        sinkcredential: { credentialtype: 'CLIENTCREDENTIALS', tokenurl: 'https://idp.example/token', clientid: 'k', clientsecret: 'geheim\ud800' },
      }),
    ).toContain('sinkcredential:string-characters');
  });

  it('EDU-14, review #1: proper surrogate pairs (emoji) and other Unicode stay accepted', () => {
    expect(rulesOf({ ...valid, source: 'urn:nld:oin:1:systeem:😀', filters: [{ exact: { subject: 'leerling ünïcödé 👩‍👩‍👧' } }] })).toEqual([]);
  });

  it('EDU-14, review #1: a deeply nested value is walked without recursion', () => {
    let deep: unknown = '\ud800';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(rulesOf({ ...valid, filters: deep })).toContain('filters:string-characters');
  });
});
