/** Who may call: the token issuer, the access-token rules (review #17) and the publish grants (EDU-IN). */
import {
  accessTokenTypeOf,
  accessTokenTypes,
  clientIdClaimProblem,
  DEFAULT_ACCESS_TOKEN_RULES,
  MAX_TOKEN_LIFETIME_LIMIT_SECONDS,
  scopeClaimNames,
  scopeClaimsOf,
  type AccessTokenRules,
} from '../core/auth/access-token-rules.js';
import { parsePublishGrants, type PublishGrants } from '../core/auth/publish-grants.js';
import { settingEnv } from './setting-names.js';
import { SettingsReader, type Env } from './settings-reader.js';

export interface AuthSettings {
  readonly issuer: string;
  readonly audience: string;
  readonly jwksUrl: URL;
  readonly tokenUrl: string;
  readonly tokenRules: AccessTokenRules;
  /** The console's user pool (issue 16), where the stack created one; its key set is at `<issuer>/.well-known/jwks.json`. */
  readonly consoleUserPool?: { readonly issuer: string; readonly clientId: string; readonly jwksUrl: URL };
}

export function readAuthSettings(settings: SettingsReader): AuthSettings {
  const issuer = settings.required(settingEnv.issuer);
  const audience = settings.required(settingEnv.audience);
  const jwksRaw = settings.required(settingEnv.jwksUrl);
  let jwksUrl = new URL('https://invalid.invalid/');
  if (jwksRaw) {
    try {
      jwksUrl = new URL(jwksRaw);
    } catch {
      settings.issues.push(`${settingEnv.jwksUrl} must be a URL, got ${JSON.stringify(jwksRaw)}`);
    }
  }
  return {
    issuer,
    audience,
    jwksUrl,
    tokenUrl: settings.text(settingEnv.tokenUrl) || `${issuer.replace(/\/+$/, '')}/oauth/token`,
    tokenRules: readAccessTokenRules(settings),
    ...consoleUserPoolOf(settings),
  };
}

function consoleUserPoolOf(settings: SettingsReader): Pick<AuthSettings, 'consoleUserPool'> {
  const issuer = settings.text(settingEnv.consoleUserPoolIssuer);
  const clientId = settings.text(settingEnv.consoleUserPoolClientId);
  if (!issuer && !clientId) return {};
  if (!issuer || !clientId) {
    settings.issues.push(
      `${settingEnv.consoleUserPoolIssuer} and ${settingEnv.consoleUserPoolClientId} go together: set both or neither`,
    );
    return {};
  }
  let jwksUrl: URL;
  try {
    jwksUrl = new URL(`${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`);
  } catch {
    settings.issues.push(
      `${settingEnv.consoleUserPoolIssuer} must be the user pool's URL, got ${JSON.stringify(issuer)}`,
    );
    return {};
  }
  return { consoleUserPool: { issuer, clientId, jwksUrl } };
}

/** The access-token settings alone, for the laptop's development identity to issue matching tokens. */
export function accessTokenRules(env: Env): AccessTokenRules {
  const settings = new SettingsReader(env);
  const rules = readAccessTokenRules(settings);
  settings.check();
  return rules;
}

function readAccessTokenRules(settings: SettingsReader): AccessTokenRules {
  const defaults = DEFAULT_ACCESS_TOKEN_RULES;
  const typeRaw = settings.text(settingEnv.accessTokenType);
  const tokenType = typeRaw ? accessTokenTypeOf(typeRaw) : defaults.tokenType;
  if (tokenType === undefined)
    settings.issues.push(
      `${settingEnv.accessTokenType} must be ${accessTokenTypes.join(' or ')}, got ${JSON.stringify(typeRaw)}`,
    );

  let maxLifetimeSeconds = defaults.maxLifetimeSeconds;
  const lifetimeRaw = settings.text(settingEnv.accessTokenMaxLifetimeSeconds);
  if (lifetimeRaw) {
    const value = Number(lifetimeRaw);
    if (!Number.isInteger(value) || value < 60 || value > MAX_TOKEN_LIFETIME_LIMIT_SECONDS) {
      settings.issues.push(
        `${settingEnv.accessTokenMaxLifetimeSeconds} must be an integer from 60 to ${MAX_TOKEN_LIFETIME_LIMIT_SECONDS}, got ${JSON.stringify(lifetimeRaw)}`,
      );
    } else {
      maxLifetimeSeconds = value;
    }
  }

  const clientIdClaim = settings.text(settingEnv.clientIdClaim) || defaults.clientIdClaim;
  const claimProblem = clientIdClaimProblem(clientIdClaim);
  if (claimProblem)
    settings.issues.push(`${settingEnv.clientIdClaim} ${claimProblem}, got ${JSON.stringify(clientIdClaim)}`);

  const scopeClaimsRaw = settings.text(settingEnv.scopeClaims);
  const scopeClaims = scopeClaimsRaw ? scopeClaimsOf(scopeClaimsRaw) : defaults.scopeClaims;
  if (scopeClaims === undefined) {
    settings.issues.push(
      `${settingEnv.scopeClaims} must name claims among ${scopeClaimNames.join(', ')}, got ${JSON.stringify(scopeClaimsRaw)}`,
    );
  }

  return {
    tokenType: tokenType ?? defaults.tokenType,
    maxLifetimeSeconds,
    clientIdClaim,
    scopeClaims: scopeClaims ?? defaults.scopeClaims,
  };
}

export function readPublishGrants(settings: SettingsReader): PublishGrants {
  try {
    return parsePublishGrants(settings.text(settingEnv.publishers) || '{}');
  } catch (error) {
    settings.issues.push(`${settingEnv.publishers}: ${(error as Error).message}`);
    return {};
  }
}
