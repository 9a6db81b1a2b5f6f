import { describe, expect, it } from 'vitest';
import {
  MAX_CONDITIONS_BYTES,
  parseSubscriptionInput,
} from '../../../functions/core/subscriptions/subscription-input.js';
import { awsInputRules } from './subscription-fixtures.js';

const aws = awsInputRules;
const sink = 'https://ontvanger.example/hook';
const rulesOf = (body: unknown, rules = aws) =>
  parseSubscriptionInput(body, rules).issues.map((i) => `${i.attribute}:${i.rule}:${i.requirement}`);

/** Filters whose conditions, as the bound counts them (source, types and filters as UTF-8 JSON), take exactly `bytes`. */
function filtersOfSize(bytes: number): Array<{ exact: Record<string, string> }> {
  const big = { exact: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`a${i}`, 'v'.repeat(1024)])) };
  const last: Record<string, string> = {};
  const filters = [big, big, big, { exact: last }];
  const size = () => Buffer.byteLength(JSON.stringify([undefined, undefined, filters]));
  for (let i = 0; size() < bytes; i++) {
    last[`b${i}`] = '';
    last[`b${i}`] = 'v'.repeat(Math.min(bytes - size(), 1024));
  }
  expect(size()).toBe(bytes);
  return filters;
}

describe('subscription members, one by one', () => {
  it('EDU-14: the subscription itself must be a JSON object; anything else is one issue on the whole body', () => {
    for (const body of [null, 'sink', 42, [{ sink }]])
      expect(rulesOf(body), JSON.stringify(body)).toEqual([':object:EDU-14']);
  });

  it('EDU-14: an empty sink counts as no sink', () => {
    expect(rulesOf({ sink: '' })).toEqual(['sink:required:EDU-14']);
  });

  it('EDU-14: source is a non-empty string of at most 1,024 characters, not an array or a number', () => {
    for (const source of ['', 7, ['nl.edu.a'], 's'.repeat(1025)])
      expect(rulesOf({ sink, source }), String(source)).toEqual(['source:non-empty-string:EDU-14']);
    expect(rulesOf({ sink, source: 's'.repeat(1024) })).toEqual([]);
  });

  it('EDU-14: types is an array of at most 32 strings; a single string or a nested array is refused', () => {
    const type = (i: number) => `nl.edu.x${i}.v1`;
    expect(rulesOf({ sink, types: Array.from({ length: 32 }, (_, i) => type(i)) })).toEqual([]);
    expect(rulesOf({ sink, types: Array.from({ length: 33 }, (_, i) => type(i)) })).toEqual([
      'types:array-of-strings:EDU-14',
    ]);
    expect(rulesOf({ sink, types: 'nl.edu.x.v1' })).toEqual(['types:array-of-strings:EDU-14']);
    expect(rulesOf({ sink, types: [['nl.edu.x.v1']] })).toEqual(['types:array-of-strings:EDU-14']);
  });

  it('WH-5, JSON-3: validation and batchsupported take only their own values', () => {
    expect(rulesOf({ sink, validation: 'none' })).toEqual(['validation:enum:WH-5']);
    expect(rulesOf({ sink, validation: 'agreed', batchsupported: 'yes' })).toEqual(['batchsupported:boolean:JSON-3']);
  });

  it('EDU-IDEM-12: retrywindowseconds is a whole number from 60 s to the idempotency TTL, both ends taken', () => {
    for (const ok of [60, aws.maxRetryWindowSeconds])
      expect(rulesOf({ sink, retrywindowseconds: ok }), String(ok)).toEqual([]);
    for (const bad of [59, 600.5, aws.maxRetryWindowSeconds + 1, '600']) {
      expect(rulesOf({ sink, retrywindowseconds: bad }), String(bad)).toEqual(['retrywindowseconds:range:EDU-IDEM-12']);
    }
  });

  it('EDU-14, issue 8 item 1: source, types and filters take at most 128 KiB as JSON, push and pull alike; the issue names filters', () => {
    for (const target of [{ sink }, { delivery: 'pull' }]) {
      expect(rulesOf({ ...target, filters: filtersOfSize(MAX_CONDITIONS_BYTES) }), JSON.stringify(target)).toEqual([]);
      expect(rulesOf({ ...target, filters: filtersOfSize(MAX_CONDITIONS_BYTES + 1) }), JSON.stringify(target)).toEqual([
        'filters:too-large:EDU-14',
      ]);
    }
    // Only the one issue that stopped it: the size is not weighed on top of another problem.
    expect(rulesOf({ sink, contentmode: 'xml', filters: filtersOfSize(MAX_CONDITIONS_BYTES + 1) })).toEqual([
      'contentmode:enum:HTTP-4',
    ]);
    expect(
      rulesOf({ delivery: 'pull', maxdeliverycount: 0, filters: filtersOfSize(MAX_CONDITIONS_BYTES + 1) }),
    ).toEqual(['maxdeliverycount:range:EDU-17']);
  });

  it('EDU-14: a subscription with any issue yields no input to store, push or pull', () => {
    expect(parseSubscriptionInput({ sink, source: '' }, aws)).toEqual({
      issues: [expect.objectContaining({ rule: 'non-empty-string' })],
    });
    expect(parseSubscriptionInput({ delivery: 'pull', source: '' }, aws)).toEqual({
      issues: [expect.objectContaining({ rule: 'non-empty-string' })],
    });
  });

  it('EDU-14, EDU-17: every member given is carried into the input, push and pull', () => {
    const { storedCredential: _none, ...create } = aws;
    const credential = {
      credentialtype: 'CLIENTCREDENTIALS',
      tokenurl: 'https://idp.example/token',
      clientid: 'c',
      clientsecret: 's',
    };
    const filters = [{ exact: { subject: 'a' } }];
    const conditions = { source: 'nl.edu.a', types: ['nl.edu.x.v1'], filters };
    expect(
      parseSubscriptionInput(
        {
          sink,
          ...conditions,
          contentmode: 'batch',
          batchsupported: true,
          validation: 'agreed',
          sinkcredential: credential,
          retrywindowseconds: 600,
          maxinlinebytes: 100_000,
        },
        create,
      ).input,
    ).toEqual({
      delivery: 'push',
      sink,
      ...conditions,
      contentMode: 'batch',
      batchSupported: true,
      credential: {
        kind: 'oauth2-client-credentials',
        tokenUrl: 'https://idp.example/token',
        clientId: 'c',
        clientSecret: 's',
      },
      validation: 'agreed',
      retryWindowSeconds: 600,
      maxInlineBytes: 100_000,
    });
    expect(parseSubscriptionInput({ delivery: 'pull', ...conditions }, aws).input).toEqual({
      delivery: 'pull',
      pull: { maxDeliveryCount: 10, retentionSeconds: 7 * 24 * 3600 },
      sink: '',
      ...conditions,
      contentMode: 'structured',
      validation: 'agreed',
    });
  });
});
