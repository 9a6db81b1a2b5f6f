import { describe, expect, it } from 'vitest';
import { parseSinkCredential } from '../../../functions/core/subscriptions/sink-credential-input.js';
import { parseSubscriptionInput, type InputRules } from '../../../functions/core/subscriptions/subscription-input.js';

// A create: nothing stored, so the credential given is the only one the subscription will have.
const create: InputRules = {
  allowLoopbackSinks: false,
  allowedPorts: [443],
  sinkCredentials: 'oauth2-only',
  maxRetryWindowSeconds: 7 * 24 * 3600,
};
const bearerAllowed: InputRules = { ...create, sinkCredentials: 'bearer-or-oauth2' };
const clientCredentials = {
  credentialtype: 'CLIENTCREDENTIALS',
  tokenurl: 'https://idp.example/token',
  clientid: 'koerier',
  clientsecret: 's3cret',
};
const sink = 'https://ontvanger.example/hook';
const rulesOf = (sinkcredential: unknown, rules = create) =>
  parseSubscriptionInput({ sink, sinkcredential }, rules).issues.map(
    (i) => `${i.attribute}:${i.rule}:${i.requirement}`,
  );
const direct = { allowLoopback: false, allowedPorts: [443], policy: 'bearer-or-oauth2' } as const;

describe('the sinkcredential member as a client writes it', () => {
  it('EDU-14: sinkcredential is an object; a string, a number or an array is refused as such', () => {
    for (const wrong of ['s3cret', 42, [clientCredentials]])
      expect(rulesOf(wrong), JSON.stringify(wrong)).toEqual(['sinkcredential:object:EDU-14']);
    expect(parseSinkCredential(null, direct)).toEqual({
      issues: [expect.objectContaining({ attribute: 'sinkcredential', rule: 'object' })],
    });
  });

  it('WH-3, EDU-14: every required member of client credentials must be there, or the subscription would be stored without a usable credential', () => {
    const { tokenurl: _t, ...noTokenUrl } = clientCredentials;
    const { clientid: _c, ...noClientId } = clientCredentials;
    // Issue 29 item 2: the rules are the schema's (required, length) where they were non-empty-string.
    expect(rulesOf(noTokenUrl)).toEqual(['sinkcredential.tokenurl:required:EDU-14']);
    expect(rulesOf(noClientId)).toEqual(['sinkcredential.clientid:required:EDU-14']);
    expect(rulesOf({ ...clientCredentials, clientid: '' })).toEqual(['sinkcredential.clientid:length:EDU-14']);
  });

  it('WH-3, EDU-14: an ACCESSTOKEN credential without its token, or with an empty one, is refused', () => {
    expect(rulesOf({ credentialtype: 'ACCESSTOKEN' }, bearerAllowed)).toEqual([
      'sinkcredential.accesstoken:required:EDU-14',
    ]);
    expect(rulesOf({ credentialtype: 'ACCESSTOKEN', accesstoken: '' }, bearerAllowed)).toEqual([
      'sinkcredential.accesstoken:length:EDU-14',
    ]);
  });

  it('EDU-14: a secret is at most 4,096 characters; one of exactly 4,096 is taken', () => {
    expect(rulesOf({ ...clientCredentials, clientsecret: 's'.repeat(4096) })).toEqual([]);
    expect(rulesOf({ ...clientCredentials, clientsecret: 's'.repeat(4097) })).toEqual([
      'sinkcredential.clientsecret:length:EDU-14',
    ]);
  });

  it('EDU-14: an unknown member inside sinkcredential is refused by its path, for either credential type', () => {
    expect(rulesOf({ ...clientCredentials, password: 'x' })).toEqual(['sinkcredential.password:unknown-member:EDU-14']);
    expect(
      rulesOf(
        { credentialtype: 'ACCESSTOKEN', accesstoken: 'abc.def', tokenurl: 'https://idp.example/token' },
        bearerAllowed,
      ),
    ).toEqual(['sinkcredential.tokenurl:unknown-member:EDU-14']);
  });

  it('WH-1, WH-3: a credential with any problem is not yielded at all, so no caller can store it beside the issues', () => {
    // The subscription parser drops it today, but the function is the one place that vouches for a credential.
    expect(parseSinkCredential({ ...clientCredentials, tokenurl: 'http://idp.example/token' }, direct)).toEqual({
      issues: [expect.objectContaining({ attribute: 'sinkcredential.tokenurl', rule: 'https', requirement: 'WH-1' })],
    });
    expect(parseSinkCredential({ ...clientCredentials, extra: 1 }, direct)).toEqual({
      issues: [expect.objectContaining({ rule: 'unknown-member' })],
    });
    expect(parseSinkCredential({ credentialtype: 'ACCESSTOKEN', accesstoken: 'abc.def', extra: 1 }, direct)).toEqual({
      issues: [expect.objectContaining({ rule: 'unknown-member' })],
    });
    expect(parseSinkCredential({ credentialtype: 'ACCESSTOKEN', accesstoken: 'abc.def' }, direct)).toEqual({
      credential: { kind: 'bearer', token: 'abc.def' },
      issues: [],
    });
  });
});
