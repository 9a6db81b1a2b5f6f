import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import {
  MAX_ENTITLEMENTS_JSON_BYTES,
  parseStackConfig,
  readStackConfig,
  settingEnvironment,
  StackConfigError,
} from '../../lib/stack-config.js';
import { loadConfig } from '../../functions/config.js';
import {
  DEFAULT_INGEST_RESERVED_CONCURRENCY,
  DEFAULT_PULL_RESERVED_CONCURRENCY,
  DEFAULT_ROUTE_THROTTLING,
} from '../../lib/protection-config.js';

const valid = {
  'koerier:issuer': 'https://login.example.org/realms/koerier',
  'koerier:audience': 'koerier',
  'koerier:jwksUrl': 'https://login.example.org/realms/koerier/certs',
  'koerier:allowedOrigins': ['partner.example.org', 'other.example.org'],
  'koerier:webhookOrigin': 'koerier.example.org',
  'koerier:publishers': { 'partner-lvs': ['urn:nld:oin:00000001823288444000:'] },
};

function rejects(overrides: Record<string, unknown>, message: RegExp): void {
  const context = { ...valid, ...overrides };
  expect(() => parseStackConfig(context)).toThrow(StackConfigError);
  expect(() => parseStackConfig(context)).toThrow(message);
}

describe('CDK context (lib/stack-config.ts)', () => {
  it('CARD-2: a complete context gives a typed configuration with the defaults filled in', () => {
    expect(parseStackConfig(valid)).toEqual({
      issuer: valid['koerier:issuer'],
      audience: 'koerier',
      jwksUrl: valid['koerier:jwksUrl'],
      allowedOrigins: ['partner.example.org', 'other.example.org'],
      webhookOrigin: 'koerier.example.org',
      accessTokenType: 'at+jwt',
      accessTokenMaxLifetimeMinutes: 120,
      clientIdClaim: 'client_id',
      idempotencyTtlDays: 7,
      logRetentionDays: 90,
      entitlements: {},
      publishers: { 'partner-lvs': ['urn:nld:oin:00000001823288444000:'] },
      validationAgreedClients: [],
      validationHandshake: 'required',
      protection: {
        ingestReservedConcurrency: DEFAULT_INGEST_RESERVED_CONCURRENCY,
        pullReservedConcurrency: DEFAULT_PULL_RESERVED_CONCURRENCY,
        routeThrottling: DEFAULT_ROUTE_THROTTLING,
        edge: { mode: 'none' },
      },
      tls: { allowCloudFrontDefaultCertificate: false },
      egress: { fixedAddresses: 0 },
      sinkCredentials: 'oauth2-only',
      outboundPorts: [443],
      stackName: 'Koerier',
      scopeClaims: ['scope', 'scp'],
      runtimeSettings: {},
      batchingWindowSeconds: { router: 1, delivery: 0, alerts: 30, replayWorker: 0, erasureWorker: 0 },
      batchSizes: { router: 10, delivery: 10, alerts: 100, replayWorker: 1, erasureWorker: 1 },
      capacity: { provisionedPollers: {}, warmThroughput: {} },
    });
  });

  it('EDU-IN: publish grants are required, client id → source prefixes, and reach the functions', () => {
    rejects({ 'koerier:publishers': undefined }, /koerier:publishers is required/);
    rejects({ 'koerier:publishers': {} }, /koerier:publishers is required/);
    rejects(
      { 'koerier:publishers': { 'partner-lvs': 'urn:nld:' } },
      /koerier:publishers publish grants of "partner-lvs" must be a list of source prefixes/,
    );
    const config = parseStackConfig({ ...valid, 'koerier:publishers': JSON.stringify({ a: ['urn:nld:oin:1:'] }) });
    expect(loadConfig(settingEnvironment(config, 'https://api.example.org')).publishGrants).toEqual({
      a: ['urn:nld:oin:1:'],
    });
  });

  it('review #15: overlapping grants of different clients fail the synth with one line naming the key and both clients', () => {
    const context = {
      ...valid,
      'koerier:publishers': { 'partner-lvs': ['urn:nld:oin:0001'], 'partner-ouder': ['urn:nld:oin:0001:app'] },
    };
    let message = '';
    try {
      parseStackConfig(context);
    } catch (error) {
      expect(error).toBeInstanceOf(StackConfigError);
      message = (error as Error).message;
    }
    expect(message).toMatch(
      /koerier:publishers publish grants of different clients overlap.*"partner-lvs" \(grant "urn:nld:oin:0001"\) and "partner-ouder" \(grant "urn:nld:oin:0001:app"\)/,
    );
    expect(message).not.toContain('\n');
    rejects(
      { 'koerier:publishers': { a: [''], b: ['urn:nld:oin:0001:'] } },
      /koerier:publishers publish grants of different clients overlap.*"a" \(grant ""\) and "b"/,
    );
    // A neighbour's longer number is no overlap.
    expect(
      parseStackConfig({ ...valid, 'koerier:publishers': { a: ['urn:nld:oin:0001'], b: ['urn:nld:oin:00012'] } })
        .publishers,
    ).toEqual({
      a: ['urn:nld:oin:0001'],
      b: ['urn:nld:oin:00012'],
    });
  });

  it('EDU-2, review #17: the token type, lifetime cap and client claim have defaults, are checked at synth, and reach the functions', () => {
    const config = parseStackConfig({
      ...valid,
      'koerier:accessTokenType': 'JWT',
      'koerier:accessTokenMaxLifetimeMinutes': '90',
      'koerier:clientIdClaim': 'azp',
    });
    expect(config).toMatchObject({ accessTokenType: 'JWT', accessTokenMaxLifetimeMinutes: 90, clientIdClaim: 'azp' });
    const environment = settingEnvironment(config, 'https://api.example.org');
    expect(environment).toMatchObject({
      KOERIER_ACCESS_TOKEN_TYPE: 'JWT',
      KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS: '5400',
      KOERIER_CLIENT_ID_CLAIM: 'azp',
    });
    expect(loadConfig(environment).auth.tokenRules).toEqual({
      tokenType: 'JWT',
      maxLifetimeSeconds: 5400,
      clientIdClaim: 'azp',
      scopeClaims: ['scope', 'scp'],
    });
    expect(loadConfig(settingEnvironment(parseStackConfig(valid), 'https://api.example.org')).auth.tokenRules).toEqual({
      tokenType: 'at+jwt',
      maxLifetimeSeconds: 7200,
      clientIdClaim: 'client_id',
      scopeClaims: ['scope', 'scp'],
    });
    rejects(
      { 'koerier:accessTokenType': 'id_token' },
      /koerier:accessTokenType must be "at\+jwt" or "JWT", got "id_token"/,
    );
    rejects({ 'koerier:accessTokenType': true }, /koerier:accessTokenType must be/);
    rejects(
      { 'koerier:accessTokenMaxLifetimeMinutes': 0 },
      /koerier:accessTokenMaxLifetimeMinutes must be a whole number of minutes from 1 to 1440, got 0/,
    );
    rejects(
      { 'koerier:accessTokenMaxLifetimeMinutes': 1441 },
      /koerier:accessTokenMaxLifetimeMinutes must be a whole number/,
    );
    rejects(
      { 'koerier:accessTokenMaxLifetimeMinutes': 'two hours' },
      /koerier:accessTokenMaxLifetimeMinutes must be a whole number/,
    );
    rejects({ 'koerier:clientIdClaim': 'iss' }, /koerier:clientIdClaim must name the client, not "iss", got "iss"/);
    rejects({ 'koerier:clientIdClaim': 'client id' }, /koerier:clientIdClaim must be a claim name/);
    rejects({ 'koerier:clientIdClaim': 7 }, /koerier:clientIdClaim must be a claim name, got 7/);
  });

  it('WH-5: clients whose consent was agreed out of band are a list (cdk.json) or a comma-separated string (-c) and reach the functions', () => {
    expect(
      parseStackConfig({ ...valid, 'koerier:validationAgreedClients': ['school-a', 'school-b'] })
        .validationAgreedClients,
    ).toEqual(['school-a', 'school-b']);
    const config = parseStackConfig({ ...valid, 'koerier:validationAgreedClients': 'school-a, school-b' });
    expect(config.validationAgreedClients).toEqual(['school-a', 'school-b']);
    expect(settingEnvironment(config, 'https://api.example.org')['KOERIER_VALIDATION_AGREED_CLIENTS']).toBe(
      'school-a,school-b',
    );
    rejects(
      { 'koerier:validationAgreedClients': { 'school-a': true } },
      /koerier:validationAgreedClients must be a list of client ids/,
    );
    rejects(
      { 'koerier:validationAgreedClients': ['school a'] },
      /koerier:validationAgreedClients must not contain spaces or commas/,
    );
  });

  it('EDU-3, WH-5: koerier:validationHandshake follows the profile (Edukoppeling drops the handshake for directory partners), is checked at synth and reaches the functions', () => {
    const policyOf = (context: Record<string, unknown>) => {
      const config = parseStackConfig({ ...valid, ...context });
      const functions = loadConfig(settingEnvironment(config, 'https://api.example.org'));
      expect(functions.validationHandshake).toBe(config.validationHandshake);
      return config.validationHandshake;
    };
    // NL GOV takes the webhook spec's abuse protection as is; so does a deployment naming no profile.
    expect(policyOf({})).toBe('required');
    expect(policyOf({ 'koerier:identityProvider': 'keycloak' })).toBe('required');
    expect(policyOf({ 'koerier:identityProvider': 'edukoppeling' })).toBe('agreed-for-directory-partners');
    // What the deployment names wins over the preset, either way.
    expect(policyOf({ 'koerier:identityProvider': 'edukoppeling', 'koerier:validationHandshake': 'required' })).toBe(
      'required',
    );
    expect(policyOf({ 'koerier:validationHandshake': ' agreed-for-directory-partners ' })).toBe(
      'agreed-for-directory-partners',
    );
    rejects(
      { 'koerier:validationHandshake': 'agreed' },
      /koerier:validationHandshake must be "required" or "agreed-for-directory-partners", got "agreed"/,
    );
    rejects(
      { 'koerier:validationHandshake': true },
      /koerier:validationHandshake must be "required" or "agreed-for-directory-partners", got true/,
    );
    // The profile's consent is the partner's OAuth2 grant; a static token is none.
    rejects(
      { 'koerier:validationHandshake': 'agreed-for-directory-partners', 'koerier:sinkCredentials': 'bearer-or-oauth2' },
      /koerier:validationHandshake "agreed-for-directory-partners" needs koerier:sinkCredentials "oauth2-only"/,
    );
  });

  it('CARD-2: the issuer is required and must be an https URL', () => {
    rejects(
      { 'koerier:issuer': undefined },
      /koerier:issuer is required: a non-empty string, e.g. -c koerier:issuer=https:\/\/login.example.org\/realms\/koerier, got nothing/,
    );
    rejects({ 'koerier:issuer': '  ' }, /koerier:issuer is required/);
    rejects(
      { 'koerier:issuer': 'http://login.example.org' },
      /koerier:issuer must be an https URL, e\.g\. .*, got "http:\/\/login.example.org"/,
    );
    rejects({ 'koerier:issuer': 'login.example.org' }, /koerier:issuer must be an https URL/);
  });

  it('CARD-2: the JWKS URL is required and must be an https URL', () => {
    rejects({ 'koerier:jwksUrl': undefined }, /koerier:jwksUrl is required/);
    rejects({ 'koerier:jwksUrl': 'http://login.example.org/certs' }, /koerier:jwksUrl must be an https URL/);
    rejects({ 'koerier:jwksUrl': 42 }, /koerier:jwksUrl is required: a non-empty string, e\.g\. .*, got 42/);
  });

  it('CARD-2: the token URL is optional and, when given, an https URL', () => {
    expect(parseStackConfig({ ...valid, 'koerier:tokenUrl': 'https://login.example.org/token' }).tokenUrl).toBe(
      'https://login.example.org/token',
    );
    rejects({ 'koerier:tokenUrl': 'http://login.example.org/token' }, /koerier:tokenUrl must be an https URL/);
    rejects({ 'koerier:tokenUrl': '' }, /koerier:tokenUrl is required: a non-empty string/);
  });

  it('CARD-2: the audience must be a non-empty string', () => {
    rejects(
      { 'koerier:audience': '' },
      /koerier:audience is required: a non-empty string, e.g. -c koerier:audience=koerier, got ""/,
    );
    rejects({ 'koerier:audience': ['koerier'] }, /koerier:audience is required/);
  });

  it('WH-7: allowed origins are a non-empty list (cdk.json) or a comma-separated string (-c) of bare origins', () => {
    rejects(
      { 'koerier:allowedOrigins': undefined },
      /koerier:allowedOrigins is required: a non-empty list of origins \(or "\*"\)/,
    );
    rejects({ 'koerier:allowedOrigins': [] }, /koerier:allowedOrigins is required/);
    rejects({ 'koerier:allowedOrigins': [1] }, /koerier:allowedOrigins is required/);
    rejects(
      { 'koerier:allowedOrigins': ['a.example.org b.example.org'] },
      /koerier:allowedOrigins must not contain spaces or commas/,
    );
    expect(
      parseStackConfig({ ...valid, 'koerier:allowedOrigins': 'a.example.org, b.example.org' }).allowedOrigins,
    ).toEqual(['a.example.org', 'b.example.org']);
    expect(parseStackConfig({ ...valid, 'koerier:allowedOrigins': ['*'] }).allowedOrigins).toEqual(['*']);
  });

  it('WH-4: the webhook origin is required and is one bare name', () => {
    rejects({ 'koerier:webhookOrigin': undefined }, /koerier:webhookOrigin is required/);
    rejects({ 'koerier:webhookOrigin': 'koerier example' }, /koerier:webhookOrigin must not contain spaces or commas/);
  });

  it('EDU-IDEM-7: the idempotency TTL defaults to 7 days and accepts whole days from 1 to 13, within the 14 days SQS keeps a retrying delivery', () => {
    expect(parseStackConfig({ ...valid, 'koerier:idempotencyTtlDays': 3 }).idempotencyTtlDays).toBe(3);
    expect(parseStackConfig({ ...valid, 'koerier:idempotencyTtlDays': '13' }).idempotencyTtlDays).toBe(13);
    rejects(
      { 'koerier:idempotencyTtlDays': 0 },
      /koerier:idempotencyTtlDays must be a whole number of days from 1 to 13, got 0/,
    );
    rejects({ 'koerier:idempotencyTtlDays': 14 }, /koerier:idempotencyTtlDays must be a whole number/);
    rejects({ 'koerier:idempotencyTtlDays': 1.5 }, /koerier:idempotencyTtlDays must be a whole number/);
    rejects({ 'koerier:idempotencyTtlDays': 'seven' }, /koerier:idempotencyTtlDays must be a whole number/);
  });

  it('EDU-1, CE-14: the inline threshold (64 to 248 KiB) and the largest event (at most 6 MiB) are optional, checked at synth, and reach the functions', () => {
    const config = parseStackConfig({
      ...valid,
      'koerier:inlineEventBytes': 131072,
      'koerier:maxEventBytes': '2097152',
    });
    const loaded = loadConfig(settingEnvironment(config, 'https://api.example.org'));
    expect([loaded.inlineEventBytes, loaded.maxEventBytes]).toEqual([131072, 2097152]);
    const defaults = loadConfig(settingEnvironment(parseStackConfig(valid), 'https://api.example.org'));
    expect([defaults.inlineEventBytes, defaults.maxEventBytes]).toEqual([65536, 4194304]);
    rejects(
      { 'koerier:inlineEventBytes': 65535 },
      /koerier:inlineEventBytes must be a whole number of bytes from 65536 to 253952, got 65535/,
    );
    rejects(
      { 'koerier:maxEventBytes': 6291457 },
      /koerier:maxEventBytes must be a whole number of bytes from 1024 to 6291456/,
    );
  });

  it('EDU-7: entitlements are a JSON object (an object in cdk.json, JSON text from -c) small enough for the Lambda environment', () => {
    const entitlements = { 'dev-subscriber': [{ typePrefix: 'nl.example.' }] };
    expect(parseStackConfig({ ...valid, 'koerier:entitlements': entitlements }).entitlements).toEqual(entitlements);
    expect(parseStackConfig({ ...valid, 'koerier:entitlements': JSON.stringify(entitlements) }).entitlements).toEqual(
      entitlements,
    );
    rejects({ 'koerier:entitlements': [] }, /koerier:entitlements must be a JSON object, got \[\]/);
    rejects(
      { 'koerier:entitlements': '{not json' },
      /koerier:entitlements is not valid JSON: a property name in double quotes expected at line 1, column 2/,
    );
    rejects({ 'koerier:entitlements': null }, /koerier:entitlements must be a JSON object/);
    // The shape the router and the subscriptions API read, checked at synth rather than in every batch.
    rejects(
      { 'koerier:entitlements': { 'dev-subscriber': { types: ['nl.example.*'] } } },
      /koerier:entitlements the grants of "dev-subscriber" must be a list/,
    );
    rejects({ 'koerier:entitlements': { 'dev-subscriber': [{ source: 'urn:nld:x' }] } }, /needs a "typePrefix" string/);
    const big = { client: 'x'.repeat(MAX_ENTITLEMENTS_JSON_BYTES) };
    rejects(
      { 'koerier:entitlements': big },
      /koerier:entitlements must serialise to at most 2048 bytes .*KOERIER_ENTITLEMENTS/,
    );
  });

  it('EDU-18: the alarm email is optional and must look like an address', () => {
    expect(parseStackConfig({ ...valid, 'koerier:alarmEmail': 'ops@example.org' }).alarmEmail).toBe('ops@example.org');
    rejects(
      { 'koerier:alarmEmail': 'ops at example.org' },
      /koerier:alarmEmail must be an email address, got "ops at example.org"/,
    );
  });

  it('issue 16: the console client is optional, one token, never empty', () => {
    expect(parseStackConfig(valid).consoleClientId).toBeUndefined();
    const accepted = { 'koerier:allowCloudFrontDefaultCertificate': true };
    expect(
      parseStackConfig({ ...valid, ...accepted, 'koerier:consoleClientId': ' koerier-console ' }).consoleClientId,
    ).toBe('koerier-console');
    rejects(
      { 'koerier:consoleClientId': '' },
      /koerier:consoleClientId must be the client id of the console at the issuer/,
    );
    rejects({ 'koerier:consoleClientId': 'two words' }, /koerier:consoleClientId must not contain spaces or commas/);
  });

  it('CARD-2: every problem is reported at once, each naming its context key', () => {
    const error = (() => {
      try {
        parseStackConfig({});
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a StackConfigError');
    })();
    for (const key of [
      'koerier:issuer',
      'koerier:audience',
      'koerier:jwksUrl',
      'koerier:allowedOrigins',
      'koerier:webhookOrigin',
    ]) {
      expect(error.message).toContain(key);
    }
  });

  it('CARD-2: readStackConfig reads the values from the CDK context of the app', () => {
    const app = new App({
      context: { ...valid, 'koerier:idempotencyTtlDays': '2', 'koerier:allowedOrigins': 'a.example.org,b.example.org' },
    });
    expect(readStackConfig(app)).toMatchObject({
      idempotencyTtlDays: 2,
      allowedOrigins: ['a.example.org', 'b.example.org'],
    });
  });

  it('CARD-2: the settings it fills are the ones functions/config.ts reads back', () => {
    const config = parseStackConfig({
      ...valid,
      'koerier:tokenUrl': 'https://login.example.org/token',
      'koerier:idempotencyTtlDays': 2,
      'koerier:entitlements': { a: [{ typePrefix: 'x' }] },
    });
    const loaded = loadConfig(settingEnvironment(config, 'https://api.example.org/v1'));
    expect(loaded.auth).toEqual({
      issuer: config.issuer,
      audience: 'koerier',
      jwksUrl: new URL(config.jwksUrl),
      tokenUrl: 'https://login.example.org/token',
      tokenRules: {
        tokenType: 'at+jwt',
        maxLifetimeSeconds: 7200,
        clientIdClaim: 'client_id',
        scopeClaims: ['scope', 'scp'],
      },
    });
    expect(loaded.allowedOrigins).toEqual(['partner.example.org', 'other.example.org']);
    expect(loaded.webhookOrigin).toBe('koerier.example.org');
    expect(loaded.idempotency.ttlSeconds).toBe(2 * 24 * 3600);
    expect(loaded.entitlements).toEqual(new Map([['a', [{ typePrefix: 'x' }]]]));
    expect(loaded.publicBaseUrl).toBe('https://api.example.org/v1');
  });
});
