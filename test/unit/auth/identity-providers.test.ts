/**
 * Issue 12 item 2: a deployment names its identity provider once and the preset fills in what
 * follows from it. Where the keys and the token endpoint follow from the issuer, the preset must
 * derive them for that issuer only: a JWKS URL derived for the wrong issuer would verify tokens
 * against someone else's keys, and partners would be sent to the wrong token endpoint.
 */
import { describe, expect, it } from 'vitest';
import {
  identityProviderOf,
  identityProviderPresets,
  presetClientIdClaim,
} from '../../../functions/core/auth/identity-providers.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';

describe('identity provider presets (issue 12 item 2)', () => {
  it('issue 12 item 2, EDU-2: the Keycloak preset derives its endpoints from a realm issuer, with or without /auth, and from nothing else', () => {
    const keycloak = identityProviderPresets.keycloak;
    expect(keycloak.endpoints('https://login.example.org/realms/partners')).toEqual({
      jwksUrl: 'https://login.example.org/realms/partners/protocol/openid-connect/certs',
      tokenUrl: 'https://login.example.org/realms/partners/protocol/openid-connect/token',
    });
    expect(keycloak.endpoints('https://sso.example.org/auth/realms/koerier')?.jwksUrl).toBe(
      'https://sso.example.org/auth/realms/koerier/protocol/openid-connect/certs',
    );
    for (const issuer of [
      'https://login.example.org',
      'http://login.example.org/realms/partners',
      'https://login.example.org/realms/partners/extra',
    ]) {
      expect(keycloak.endpoints(issuer), issuer).toBeUndefined();
    }
  });

  it('issue 12 item 2, EDU-2: the Entra ID preset derives the tenant’s v2.0 endpoints from a v2.0 or a v1.0 issuer', () => {
    const expected = {
      jwksUrl: `https://login.microsoftonline.com/${TENANT}/discovery/v2.0/keys`,
      tokenUrl: `https://login.microsoftonline.com/${TENANT}/oauth2/v2.0/token`,
    };
    const entra = identityProviderPresets['entra-id'];
    expect(entra.endpoints(`https://login.microsoftonline.com/${TENANT}/v2.0`)).toEqual(expected);
    expect(entra.endpoints(`https://sts.windows.net/${TENANT}/`)).toEqual(expected);
    expect(entra.endpoints(`https://sts.windows.net/${TENANT}`)).toEqual(expected);
  });

  it('issue 12 item 2, EDU-2: the Entra ID preset derives nothing from an issuer that names no tenant the Entra way', () => {
    const entra = identityProviderPresets['entra-id'];
    for (const issuer of [
      'https://login.example.org/realms/partners',
      `https://login.microsoftonline.com/${TENANT}`,
      `https://evil.example/${TENANT}/v2.0`,
      'https://login.microsoftonline.com/common/v2.0',
    ]) {
      expect(entra.endpoints(issuer), issuer).toBeUndefined();
    }
    // The Edukoppeling profile names no endpoint layout: its deployment gives both URLs.
    expect(identityProviderPresets.edukoppeling.endpoints('https://idp.edu.example.org')).toBeUndefined();
  });

  it('issue 12 item 2, EDU-2: only Entra ID’s v1.0 issuer moves the client claim to appid; other presets keep theirs whatever the issuer', () => {
    const v1 = `https://sts.windows.net/${TENANT}/`;
    expect(presetClientIdClaim('entra-id', v1)).toBe('appid');
    expect(presetClientIdClaim('entra-id', `https://login.microsoftonline.com/${TENANT}/v2.0`)).toBe('azp');
    expect(presetClientIdClaim('keycloak', v1)).toBe('azp');
    expect(presetClientIdClaim('edukoppeling', v1)).toBe('client_id');
  });

  it('issue 12 item 2: a provider name is matched case-insensitively and around spaces; an unknown one names no preset', () => {
    expect(identityProviderOf('keycloak')).toBe('keycloak');
    expect(identityProviderOf(' Entra-ID ')).toBe('entra-id');
    expect(identityProviderOf('EDUKOPPELING')).toBe('edukoppeling');
    expect(identityProviderOf('okta')).toBeUndefined();
    expect(identityProviderOf('')).toBeUndefined();
  });
});
