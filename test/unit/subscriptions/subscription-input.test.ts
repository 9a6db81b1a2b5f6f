import { describe, expect, it } from 'vitest';
import { judgeAddress } from '../../../functions/net/ip-address-policy.js';
import {
  mergePatch,
  parseSubscriptionInput,
  PatchTooDeepError,
  type InputRules,
} from '../../../functions/core/subscriptions/subscription-input.js';
import { awsInputRules } from './subscription-fixtures.js';

// Most cases are about other members: as if a credential were already stored (a PATCH without `sinkcredential`).
const aws = awsInputRules;
const laptop = { ...aws, allowLoopbackSinks: true };
const bearerAllowed: InputRules = { ...aws, sinkCredentials: 'bearer-or-oauth2' };
/** A create: nothing stored, so `sinkcredential` must be given. */
const { storedCredential: _none, ...create } = aws;
const clientCredentials = {
  credentialtype: 'CLIENTCREDENTIALS',
  tokenurl: 'https://idp.example/token',
  clientid: 'koerier',
  clientsecret: 's3cret',
};
const rulesOf = (body: unknown, rules = aws) =>
  parseSubscriptionInput(body, rules).issues.map((i) => `${i.attribute}:${i.rule}:${i.requirement}`);

describe('subscription input', () => {
  it('EDU-14: a minimal subscription gets the defaults: push, structured, handshake', () => {
    expect(
      parseSubscriptionInput({ sink: 'https://ontvanger.example/webhook', types: ['nl.edu.x.v1'] }, aws).input,
    ).toEqual({
      delivery: 'push',
      sink: 'https://ontvanger.example/webhook',
      types: ['nl.edu.x.v1'],
      contentMode: 'structured',
      validation: 'handshake',
    });
  });

  it('WH-1: the sink must be https; plain http only to loopback, and only on the laptop host', () => {
    expect(rulesOf({ sink: 'http://ontvanger.example/webhook' })).toEqual(['sink:https:WH-1']);
    expect(rulesOf({ sink: 'http://127.0.0.1:8080/hook' })).toEqual(['sink:https:WH-1']);
    expect(rulesOf({ sink: 'http://127.0.0.1:8080/hook' }, laptop)).toEqual([]);
    expect(rulesOf({ sink: 'http://localhost/hook' }, laptop)).toEqual([]);
    expect(rulesOf({ sink: 'http://ontvanger.example/hook' }, laptop)).toEqual(['sink:https:WH-1']);
    expect(rulesOf({ sink: 'ftp://ontvanger.example/' })).toEqual(['sink:https:WH-1']);
    expect(rulesOf({ sink: '/relative' })).toEqual(['sink:url:EDU-14']);
    expect(rulesOf({})).toEqual(['sink:required:EDU-14']);
  });

  it('WH-1, issue 12 item 8: a sink or token URL written as a private, link-local or (in AWS) loopback address is refused as given, with the range named', () => {
    const judged = (allowLoopback: boolean) => (address: string) => {
      const verdict = judgeAddress(address, { allowLoopback });
      return verdict.allowed ? undefined : (verdict.range ?? 'not public');
    };
    const onAws = { ...aws, refusedAddressRange: judged(false) };
    const onLaptop = { ...laptop, refusedAddressRange: judged(true) };
    for (const sink of [
      'https://10.0.0.5/hook',
      'https://192.168.1.10/hook',
      'https://169.254.169.254/latest',
      'https://[fd00::1]/hook',
      'https://0x7f.1/hook',
      'https://127.0.0.1/hook',
    ]) {
      expect(rulesOf({ sink }, onAws), sink).toEqual(['sink:public-address:WH-1']);
    }
    expect(parseSubscriptionInput({ sink: 'https://10.0.0.5/hook' }, onAws).issues[0]!.message).toBe(
      'sink names an address Koerier never calls (private (RFC 1918)); give a public host name or address',
    );
    expect(rulesOf({ sink: 'https://ontvanger.example/hook' }, onAws)).toEqual([]);
    expect(rulesOf({ sink: 'https://93.184.216.34/hook' }, onAws)).toEqual([]);
    // The laptop host keeps reaching its own loopback, and nothing else private.
    expect(rulesOf({ sink: 'http://127.0.0.1:8080/hook' }, onLaptop)).toEqual([]);
    expect(rulesOf({ sink: 'https://10.0.0.5/hook' }, onLaptop)).toEqual(['sink:public-address:WH-1']);
    const token = parseSubscriptionInput(
      {
        sink: 'https://ontvanger.example/hook',
        sinkcredential: { ...clientCredentials, tokenurl: 'https://172.16.0.1/token' },
      },
      { ...create, refusedAddressRange: judged(false) },
    );
    expect(token.issues.map((i) => `${i.attribute}:${i.rule}`)).toEqual(['sinkcredential.tokenurl:public-address']);
  });

  it('WH-3: credentials in the sink URL are refused', () => {
    expect(rulesOf({ sink: 'https://user:secret@ontvanger.example/hook' })).toEqual(['sink:no-userinfo:WH-3']);
  });

  it('EDU-17: unknown delivery kinds are refused', () => {
    expect(rulesOf({ sink: 'https://a.example/', delivery: 'carrier-pigeon' })).toEqual(['delivery:enum:EDU-17']);
  });

  it('EDU-17: a pull subscription gets the queue defaults and no push member; every push member in it is refused by name', () => {
    expect(parseSubscriptionInput({ delivery: 'pull', types: ['nl.edu.x.v1'] }, aws).input).toEqual({
      delivery: 'pull',
      pull: { maxDeliveryCount: 10, retentionSeconds: 7 * 24 * 3600 },
      sink: '',
      types: ['nl.edu.x.v1'],
      contentMode: 'structured',
      validation: 'agreed',
    });
    expect(
      rulesOf({
        delivery: 'pull',
        sink: 'https://a.example/',
        sinkcredential: { credentialtype: 'ACCESSTOKEN', accesstoken: 't' },
        contentmode: 'batch',
        batchsupported: true,
        validation: 'agreed',
        retrywindowseconds: 600,
        protocol: 'HTTP',
      }).sort(),
    ).toEqual(
      ['batchsupported', 'contentmode', 'protocol', 'retrywindowseconds', 'sink', 'sinkcredential', 'validation'].map(
        (name) => `${name}:push-only:EDU-17`,
      ),
    );
  });

  it('EDU-17: maxdeliverycount is 1–1,000 and retentionseconds 60 s – 14 days; in a push subscription both are refused', () => {
    const pull = (settings: Record<string, unknown>) => parseSubscriptionInput({ delivery: 'pull', ...settings }, aws);
    expect(pull({ maxdeliverycount: 1, retentionseconds: 60 }).input?.pull).toEqual({
      maxDeliveryCount: 1,
      retentionSeconds: 60,
    });
    expect(pull({ maxdeliverycount: 1000, retentionseconds: 1_209_600 }).input?.pull).toEqual({
      maxDeliveryCount: 1000,
      retentionSeconds: 1_209_600,
    });
    for (const wrong of [0, 1001, 1.5, '10'])
      expect(rulesOf({ delivery: 'pull', maxdeliverycount: wrong })).toEqual(['maxdeliverycount:range:EDU-17']);
    for (const wrong of [59, 1_209_601])
      expect(rulesOf({ delivery: 'pull', retentionseconds: wrong })).toEqual(['retentionseconds:range:EDU-17']);
    expect(
      rulesOf({ sink: 'https://a.example/', maxdeliverycount: 5, retentionseconds: 60 }).filter((rule) =>
        rule.includes('pull-only'),
      ),
    ).toEqual(['maxdeliverycount:pull-only:EDU-17', 'retentionseconds:pull-only:EDU-17']);
  });

  it('JSON-3: with the handshake, batch support is declared by the target, not by the subscriber', () => {
    expect(rulesOf({ sink: 'https://a.example/', contentmode: 'batch', batchsupported: true })).toEqual([
      'batchsupported:declared-by-target:JSON-3',
    ]);
    expect(
      parseSubscriptionInput(
        { sink: 'https://a.example/', contentmode: 'batch', batchsupported: true, validation: 'agreed' },
        aws,
      ).input,
    ).toMatchObject({
      contentMode: 'batch',
      batchSupported: true,
      validation: 'agreed',
    });
    expect(rulesOf({ sink: 'https://a.example/', contentmode: 'xml' })).toEqual(['contentmode:enum:HTTP-4']);
  });

  it('EDU-14: unknown members are errors; read-only members echoed from a GET are ignored', () => {
    expect(rulesOf({ sink: 'https://a.example/', typse: ['x'] })).toEqual(['typse:unknown-member:EDU-14']);
    expect(rulesOf({ sink: 'https://a.example/', id: 'mine', status: 'active', createdat: 'x' })).toEqual([]);
  });

  it('EDU-14: types must be non-empty strings; filters are checked; every error is reported at once', () => {
    expect(
      rulesOf({ sink: 'https://a.example/', types: ['ok', ''], filters: [{ jsonpath: '$.x' }], protocol: 'AMQP' }),
    ).toEqual(['types:array-of-strings:EDU-14', 'filters[0]:unsupported-dialect:EDU-14', 'protocol:enum:EDU-14']);
  });

  it('EDU-14: a sink credential is a bearer token or OAuth2 client credentials', () => {
    expect(
      parseSubscriptionInput(
        { sink: 'https://a.example/', sinkcredential: { credentialtype: 'ACCESSTOKEN', accesstoken: 'abc.def' } },
        bearerAllowed,
      ).input?.credential,
    ).toEqual({
      kind: 'bearer',
      token: 'abc.def',
    });
    const oauth = {
      credentialtype: 'CLIENTCREDENTIALS',
      tokenurl: 'https://idp.example/token',
      clientid: 'koerier',
      clientsecret: 's3cret',
      scope: 'events',
      audience: 'https://ontvanger.example',
    };
    expect(
      parseSubscriptionInput({ sink: 'https://a.example/', sinkcredential: oauth }, aws).input?.credential,
    ).toEqual({
      kind: 'oauth2-client-credentials',
      tokenUrl: 'https://idp.example/token',
      clientId: 'koerier',
      clientSecret: 's3cret',
      scope: 'events',
      audience: 'https://ontvanger.example',
    });
    expect(rulesOf({ sink: 'https://a.example/', sinkcredential: { credentialtype: 'PLAIN' } })).toEqual([
      'sinkcredential.credentialtype:enum:EDU-14',
    ]);
    expect(
      rulesOf(
        { sink: 'https://a.example/', sinkcredential: { credentialtype: 'ACCESSTOKEN', accesstoken: 'has space' } },
        bearerAllowed,
      ),
    ).toEqual(['sinkcredential.accesstoken:pattern:EDU-14']);
    expect(
      rulesOf({
        sink: 'https://a.example/',
        sinkcredential: { credentialtype: 'CLIENTCREDENTIALS', tokenurl: 'x', clientid: 'c' },
      }),
    ).toEqual(['sinkcredential.clientsecret:required:EDU-14', 'sinkcredential.tokenurl:uri:EDU-14']);
  });

  it("WH-1, WH-3: the token URL of client credentials follows the sink's rules: https (plain http only to loopback on the laptop host), no user info, no fragment", () => {
    const withTokenUrl = (tokenurl: string) => ({
      sink: 'https://a.example/',
      sinkcredential: { credentialtype: 'CLIENTCREDENTIALS', tokenurl, clientid: 'c', clientsecret: 's' },
    });
    expect(rulesOf(withTokenUrl('https://idp.example/token'))).toEqual([]);
    expect(rulesOf(withTokenUrl('http://idp.example/token'))).toEqual(['sinkcredential.tokenurl:https:WH-1']);
    expect(rulesOf(withTokenUrl('http://idp.example/token'), laptop)).toEqual(['sinkcredential.tokenurl:https:WH-1']);
    expect(rulesOf(withTokenUrl('http://127.0.0.1:8443/token'))).toEqual(['sinkcredential.tokenurl:https:WH-1']);
    expect(rulesOf(withTokenUrl('http://127.0.0.1:8443/token'), laptop)).toEqual([]);
    expect(rulesOf(withTokenUrl('https://koerier:secret@idp.example/token'))).toEqual([
      'sinkcredential.tokenurl:no-userinfo:WH-3',
    ]);
    expect(rulesOf(withTokenUrl('https://idp.example/token#x'))).toEqual([
      'sinkcredential.tokenurl:no-fragment:EDU-14',
    ]);
  });

  it('WH-3: a push subscription without sinkcredential is refused, naming the member; null does not count as one', () => {
    expect(rulesOf({ sink: 'https://a.example/' }, create)).toEqual(['sinkcredential:required:WH-3']);
    expect(rulesOf({ sink: 'https://a.example/', sinkcredential: null }, create)).toEqual([
      'sinkcredential:required:WH-3',
    ]);
    expect(rulesOf({ sink: 'https://a.example/', sinkcredential: clientCredentials }, create)).toEqual([]);
  });

  it('EDU-4: with oauth2-only (the default) a static access token is refused, given anew or kept from before', () => {
    const bearer = { credentialtype: 'ACCESSTOKEN', accesstoken: 'abc.def' };
    expect(rulesOf({ sink: 'https://a.example/', sinkcredential: bearer }, create)).toEqual([
      'sinkcredential.credentialtype:oauth2-only:EDU-14',
    ]);
    expect(rulesOf({ sink: 'https://a.example/' }, { ...aws, storedCredential: 'bearer' })).toEqual([
      'sinkcredential:oauth2-only:EDU-4',
    ]);
    expect(
      rulesOf(
        { sink: 'https://a.example/', sinkcredential: bearer },
        { ...create, sinkCredentials: 'bearer-or-oauth2' },
      ),
    ).toEqual([]);
    expect(rulesOf({ sink: 'https://a.example/' }, { ...bearerAllowed, storedCredential: 'bearer' })).toEqual([]);
  });

  it('review #19: sinks and token URLs name only the allowed ports (443 by default); the laptop host may use any port on loopback', () => {
    const withTokenUrl = (tokenurl: string) => ({
      sink: 'https://a.example/',
      sinkcredential: { ...clientCredentials, tokenurl },
    });
    expect(rulesOf({ sink: 'https://a.example:443/' })).toEqual([]);
    expect(rulesOf({ sink: 'https://a.example:22/' })).toEqual(['sink:port:WH-1']);
    expect(rulesOf({ sink: 'https://a.example:8443/' })).toEqual(['sink:port:WH-1']);
    expect(rulesOf({ sink: 'https://a.example:8443/' }, { ...aws, allowedPorts: [443, 8443] })).toEqual([]);
    expect(rulesOf(withTokenUrl('https://idp.example:6379/token'))).toEqual(['sinkcredential.tokenurl:port:WH-1']);
    expect(rulesOf({ sink: 'https://127.0.0.1:8443/hook' }, laptop)).toEqual([]);
    expect(rulesOf({ sink: 'https://127.0.0.1:8443/hook' })).toEqual(['sink:port:WH-1']);
    expect(rulesOf({ sink: 'https://hooks.example:8443/hook' }, laptop)).toEqual(['sink:port:WH-1']);
  });

  it('review #9: a merge patch nested deeper than the bound throws PatchTooDeepError instead of exhausting the stack', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(() => mergePatch({}, deep)).toThrow(PatchTooDeepError);
    expect(mergePatch({ a: { b: 1 } }, { a: { c: 2 } })).toEqual({ a: { b: 1, c: 2 } });
  });

  it('EDU-IDEM-12: a retry window beyond the idempotency TTL is refused', () => {
    expect(rulesOf({ sink: 'https://a.example/', retrywindowseconds: 8 * 24 * 3600 })).toEqual([
      'retrywindowseconds:range:EDU-IDEM-12',
    ]);
    expect(rulesOf({ sink: 'https://a.example/', retrywindowseconds: 3600 })).toEqual([]);
  });

  it('EDU-1, CE-14: maxinlinebytes is a whole number from 64 KiB (every intermediary forwards that much) to 6 MiB', () => {
    for (const bad of [65_535, 6_291_457, 100_000.5, '100000']) {
      expect(rulesOf({ sink: 'https://a.example/', maxinlinebytes: bad }), String(bad)).toEqual([
        'maxinlinebytes:range:EDU-1',
      ]);
    }
    expect(rulesOf({ sink: 'https://a.example/', maxinlinebytes: 65_536 })).toEqual([]);
    expect(rulesOf({ sink: 'https://a.example/', maxinlinebytes: 6_291_456 })).toEqual([]);
  });

  it('EDU-1: a pull subscription takes maxinlinebytes too, within the same range', () => {
    expect(parseSubscriptionInput({ delivery: 'pull', maxinlinebytes: 2_097_152 }, aws).input).toMatchObject({
      delivery: 'pull',
      maxInlineBytes: 2_097_152,
    });
    expect(parseSubscriptionInput({ delivery: 'pull' }, aws).input).not.toHaveProperty('maxInlineBytes');
    for (const bad of [65_535, 6_291_457])
      expect(rulesOf({ delivery: 'pull', maxinlinebytes: bad })).toEqual(['maxinlinebytes:range:EDU-1']);
  });

  it('EDU-14: a PATCH is a JSON merge patch: null removes, arrays replace, objects merge', () => {
    expect(mergePatch({ sink: 'a', types: ['x', 'y'], source: 's' }, { types: ['z'], source: null })).toEqual({
      sink: 'a',
      types: ['z'],
    });
  });

  it('EDU-14: a "__proto__" member of a PATCH is an unknown member like any other, not a way around the check', () => {
    const merged = mergePatch(
      { sink: 'https://a.example/' },
      JSON.parse('{"__proto__": {"typse": ["x"], "types": ["nl.edu.x.v1"]}}'),
    );
    expect(rulesOf(merged)).toEqual(['__proto__:unknown-member:EDU-14']);
    const nested = mergePatch(
      {},
      JSON.parse('{"sinkcredential": {"__proto__": {"credentialtype": "ACCESSTOKEN"}}}'),
    ) as Record<string, object>;
    expect(Object.keys(nested['sinkcredential']!)).toEqual(['__proto__']);
  });

  it('issue 12 #6: signdeliveries is a boolean, and true only where the deployment has a signing key', () => {
    const sink = 'https://a.example/';
    expect(rulesOf({ sink, signdeliveries: true })).toEqual(['signdeliveries:signing-unavailable:EDU-14']);
    expect(rulesOf({ sink, signdeliveries: true }, { ...aws, signingAvailable: true })).toEqual([]);
    expect(rulesOf({ sink, signdeliveries: false })).toEqual([]);
    expect(rulesOf({ sink, signdeliveries: 'true' }, { ...aws, signingAvailable: true })).toEqual([
      'signdeliveries:boolean:EDU-14',
    ]);
    expect(
      parseSubscriptionInput({ sink, signdeliveries: true }, { ...aws, signingAvailable: true }).input?.signDeliveries,
    ).toBe(true);
    expect(
      parseSubscriptionInput({ sink, signdeliveries: false }, { ...aws, signingAvailable: true }).input,
    ).not.toHaveProperty('signDeliveries');
    expect(rulesOf({ delivery: 'pull', signdeliveries: true }, { ...aws, signingAvailable: true })).toEqual([
      'signdeliveries:push-only:EDU-17',
    ]);
  });
});
