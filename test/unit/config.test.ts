import { describe, expect, it } from 'vitest';
import { loadConfig, MAX_IDEMPOTENCY_TTL_SECONDS } from '../../functions/config.js';
import { queues } from '../../functions/config/resources.js';

const base = {
  KOERIER_ISSUER: 'https://issuer.example',
  KOERIER_AUDIENCE: 'koerier',
  KOERIER_JWKS_URL: 'https://issuer.example/jwks',
};

describe('configuration', () => {
  it('rejects a missing issuer with a message naming the variable', () => {
    expect(() => loadConfig({ KOERIER_AUDIENCE: 'a', KOERIER_JWKS_URL: 'https://x/jwks' })).toThrow(
      /KOERIER_ISSUER is required/,
    );
  });

  it('EDU-IDEM-7: keys live 7 days by default, and never longer than SQS keeps a delivery that is still retrying', () => {
    expect(loadConfig(base).idempotency.ttlSeconds).toBe(7 * 24 * 3600);
    expect(MAX_IDEMPOTENCY_TTL_SECONDS).toBeLessThan(queues.deliveries.retentionSeconds);
    expect(() =>
      loadConfig({ ...base, KOERIER_IDEMPOTENCY_TTL_SECONDS: String(MAX_IDEMPOTENCY_TTL_SECONDS + 1) }),
    ).toThrow(/KOERIER_IDEMPOTENCY_TTL_SECONDS must be an integer/);
  });

  it('EDU-3, WH-5: the handshake policy defaults to required (NL GOV), takes the Edukoppeling one, and a bad value stops the start', () => {
    expect(loadConfig(base).validationHandshake).toBe('required');
    expect(
      loadConfig({ ...base, KOERIER_VALIDATION_HANDSHAKE: 'agreed-for-directory-partners' }).validationHandshake,
    ).toBe('agreed-for-directory-partners');
    expect(() => loadConfig({ ...base, KOERIER_VALIDATION_HANDSHAKE: 'never' })).toThrow(
      /KOERIER_VALIDATION_HANDSHAKE must be "required" or "agreed-for-directory-partners", got "never"/,
    );
    expect(() =>
      loadConfig({
        ...base,
        KOERIER_VALIDATION_HANDSHAKE: 'agreed-for-directory-partners',
        KOERIER_SINK_CREDENTIALS: 'bearer-or-oauth2',
      }),
    ).toThrow(
      /KOERIER_VALIDATION_HANDSHAKE "agreed-for-directory-partners" needs KOERIER_SINK_CREDENTIALS "oauth2-only"/,
    );
  });

  it('EDU-7: entitlements of the wrong shape stop the start, not every router batch', () => {
    expect(() => loadConfig({ ...base, KOERIER_ENTITLEMENTS: '{"dev-subscriber":{"types":["x"]}}' })).toThrow(
      /KOERIER_ENTITLEMENTS/,
    );
  });

  it('EDU-IN: publish grants default to nobody and must be client → list of source prefixes', () => {
    expect(loadConfig(base).publishGrants).toEqual({});
    expect(() => loadConfig({ ...base, KOERIER_PUBLISHERS: '{"a":"urn:nld:"}' })).toThrow(/KOERIER_PUBLISHERS/);
  });

  it('review #15: overlapping publish grants of different clients stop the start, naming both clients', () => {
    expect(() =>
      loadConfig({
        ...base,
        KOERIER_PUBLISHERS: JSON.stringify({ 'school-a': ['urn:nld:oin:0001'], 'school-b': ['urn:nld:oin:0001:lvs'] }),
      }),
    ).toThrow(
      /KOERIER_PUBLISHERS: publish grants of different clients overlap.*"school-a" \(grant "urn:nld:oin:0001"\) and "school-b"/,
    );
    // Neighbouring numbers share characters, not segments: no overlap.
    const grants = { 'school-a': ['urn:nld:oin:0001'], 'school-b': ['urn:nld:oin:00012'] };
    expect(loadConfig({ ...base, KOERIER_PUBLISHERS: JSON.stringify(grants) }).publishGrants).toEqual(grants);
  });

  it('EDU-2, EDU-4, review #17: access tokens default to typ at+jwt, a 2-hour lifetime cap and the client_id claim', () => {
    expect(loadConfig(base).auth.tokenRules).toEqual({
      tokenType: 'at+jwt',
      maxLifetimeSeconds: 7200,
      clientIdClaim: 'client_id',
      scopeClaims: ['scope', 'scp'],
    });
  });

  it('EDU-2, review #17: the token type switch, the lifetime cap and the client claim are read and checked once', () => {
    const rules = loadConfig({
      ...base,
      KOERIER_ACCESS_TOKEN_TYPE: 'jwt',
      KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS: '5400',
      KOERIER_CLIENT_ID_CLAIM: 'azp',
      KOERIER_SCOPE_CLAIMS: 'roles',
    }).auth.tokenRules;
    expect(rules).toEqual({ tokenType: 'JWT', maxLifetimeSeconds: 5400, clientIdClaim: 'azp', scopeClaims: ['roles'] });
    expect(() => loadConfig({ ...base, KOERIER_SCOPE_CLAIMS: 'groups' })).toThrow(
      /KOERIER_SCOPE_CLAIMS must name claims among scope, scp, roles, got "groups"/,
    );
    expect(() => loadConfig({ ...base, KOERIER_ACCESS_TOKEN_TYPE: 'id+jwt' })).toThrow(
      /KOERIER_ACCESS_TOKEN_TYPE must be at\+jwt or JWT, got "id\+jwt"/,
    );
    expect(() => loadConfig({ ...base, KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS: '86401' })).toThrow(
      /KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS must be an integer from 60 to 86400/,
    );
    expect(() => loadConfig({ ...base, KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS: '2h' })).toThrow(
      /KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS/,
    );
    expect(() => loadConfig({ ...base, KOERIER_CLIENT_ID_CLAIM: 'aud' })).toThrow(
      /KOERIER_CLIENT_ID_CLAIM must name the client, not "aud"/,
    );
    expect(() => loadConfig({ ...base, KOERIER_CLIENT_ID_CLAIM: 'client id' })).toThrow(
      /KOERIER_CLIENT_ID_CLAIM must be a claim name/,
    );
    // Naming `sub` is a choice a deployment may make; it is never a silent fallback.
    expect(loadConfig({ ...base, KOERIER_CLIENT_ID_CLAIM: 'sub' }).auth.tokenRules.clientIdClaim).toBe('sub');
    expect(
      loadConfig({ ...base, KOERIER_CLIENT_ID_CLAIM: 'https://example.org/claims/client' }).auth.tokenRules
        .clientIdClaim,
    ).toBe('https://example.org/claims/client');
    expect(() => loadConfig({ ...base, KOERIER_CLIENT_ID_CLAIM: 'client"id' })).toThrow(
      /KOERIER_CLIENT_ID_CLAIM must be a claim name/,
    );
  });

  it('issue 12 #5, #6: the client certificate is a Secrets Manager ARN or file:, the signing keys a list without repeats; both optional', () => {
    expect(loadConfig(base).delivery).toMatchObject({ signingKeys: [] });
    expect(loadConfig(base).delivery).not.toHaveProperty('clientCertificate');
    const arn = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:koerier/mtls-AbCdEf';
    expect(loadConfig({ ...base, KOERIER_CLIENT_CERTIFICATE: arn }).delivery.clientCertificate).toBe(arn);
    expect(loadConfig({ ...base, KOERIER_CLIENT_CERTIFICATE: 'file:/tmp/client.pem' }).delivery.clientCertificate).toBe(
      'file:/tmp/client.pem',
    );
    expect(() => loadConfig({ ...base, KOERIER_CLIENT_CERTIFICATE: '/tmp/client.pem' })).toThrow(
      /KOERIER_CLIENT_CERTIFICATE must be the ARN of a Secrets Manager secret or file:<path>, got "\/tmp\/client.pem"/,
    );
    expect(loadConfig({ ...base, KOERIER_SIGNING_KEYS: 'alias/new, alias/old' }).delivery.signingKeys).toEqual([
      'alias/new',
      'alias/old',
    ]);
    expect(() => loadConfig({ ...base, KOERIER_SIGNING_KEYS: 'alias/a,alias/a' })).toThrow(
      /KOERIER_SIGNING_KEYS names a key twice/,
    );
  });
});
