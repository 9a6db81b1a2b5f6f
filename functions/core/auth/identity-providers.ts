/**
 * Identity providers as they are (issue 12, item 2): what their client-credentials access tokens
 * look like, so a deployment names its provider once (`koerier:identityProvider`) instead of
 * knowing each claim. A preset only fills what the deployment leaves unset; every value can
 * still be given explicitly. docs/DEPLOYING.md "Identity provider" describes the set-up per preset.
 */
import type { ValidationHandshakePolicy } from '../webhooks/handshake-policy.js';
import type { AccessTokenType, ScopeClaim } from './access-token-rules.js';

export const identityProviderNames = ['keycloak', 'entra-id', 'edukoppeling'] as const;
export type IdentityProviderName = (typeof identityProviderNames)[number];

export interface IdentityProviderPreset {
  readonly tokenType: AccessTokenType;
  readonly clientIdClaim: string;
  readonly scopeClaims: readonly ScopeClaim[];
  /** The JWKS and token endpoint follow from the issuer for some providers; undefined: they must be given. */
  endpoints(issuer: string): { readonly jwksUrl: string; readonly tokenUrl: string } | undefined;
  /** Only OAuth2 client credentials towards subscribers (the Edukoppeling profile asks it, EDU-4). */
  readonly oauth2SinksOnly: boolean;
  /** The default of `koerier:validationHandshake` (functions/core/webhooks/handshake-policy.ts): the profile's word on abuse protection. */
  readonly validationHandshake: ValidationHandshakePolicy;
}

/** `https://login.microsoftonline.com/<tenant>/v2.0` (v2.0 tokens) or `https://sts.windows.net/<tenant>/` (v1.0). */
const ENTRA_V2_ISSUER = /^https:\/\/login\.microsoftonline\.com\/([0-9a-f-]{36})\/v2\.0\/?$/i;
const ENTRA_V1_ISSUER = /^https:\/\/sts\.windows\.net\/([0-9a-f-]{36})\/?$/i;
/** `https://<host>[/auth]/realms/<realm>`: Keycloak 17+ drops the `/auth` prefix, older ones keep it. */
const KEYCLOAK_ISSUER = /^https:\/\/[^/]+(\/auth)?\/realms\/[^/]+$/;

export const identityProviderPresets: Readonly<Record<IdentityProviderName, IdentityProviderPreset>> = {
  // Keycloak labels access tokens `typ: JWT` unless the client's "Use 'at+jwt'" switch is on, and
  // names the client in `azp` in every version (`client_id` only in recent ones).
  keycloak: {
    tokenType: 'JWT',
    clientIdClaim: 'azp',
    scopeClaims: ['scope'],
    endpoints: (issuer) =>
      KEYCLOAK_ISSUER.test(issuer)
        ? { jwksUrl: `${issuer}/protocol/openid-connect/certs`, tokenUrl: `${issuer}/protocol/openid-connect/token` }
        : undefined,
    oauth2SinksOnly: false,
    validationHandshake: 'required',
  },
  // Entra ID application tokens: `typ: JWT`, the client in `azp` (v2.0) or `appid` (v1.0), and the
  // application permissions granted to the client in `roles`, an array (`scp` is for user tokens).
  'entra-id': {
    tokenType: 'JWT',
    clientIdClaim: 'azp',
    scopeClaims: ['roles'],
    endpoints: (issuer) => {
      const tenant = ENTRA_V2_ISSUER.exec(issuer)?.[1] ?? ENTRA_V1_ISSUER.exec(issuer)?.[1];
      if (tenant === undefined) return undefined;
      return {
        jwksUrl: `https://login.microsoftonline.com/${tenant}/discovery/v2.0/keys`,
        tokenUrl: `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
      };
    },
    oauth2SinksOnly: false,
    validationHandshake: 'required',
  },
  // The Edukoppeling OAuth client-credentials profile: RFC 9068 access tokens as they are written
  // (`typ: at+jwt`, `client_id`, `scope`), confidential clients only, OAuth2 towards every party,
  // and no abuse-protection handshake (rule 3f): the partner's OAuth2 grant is its consent.
  edukoppeling: {
    tokenType: 'at+jwt',
    clientIdClaim: 'client_id',
    scopeClaims: ['scope'],
    endpoints: () => undefined,
    oauth2SinksOnly: true,
    validationHandshake: 'agreed-for-directory-partners',
  },
};

/** The client claim a preset expects for this issuer: Entra ID's v1.0 tokens name the client in `appid`. */
export function presetClientIdClaim(name: IdentityProviderName, issuer: string): string {
  if (name === 'entra-id' && ENTRA_V1_ISSUER.test(issuer)) return 'appid';
  return identityProviderPresets[name].clientIdClaim;
}

export function identityProviderOf(value: string): IdentityProviderName | undefined {
  return identityProviderNames.find((name) => name === value.trim().toLowerCase());
}
