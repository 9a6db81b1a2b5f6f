/**
 * The deployment's settings, read once from the CDK context (`cdk.json` or `-c key=value`) into a
 * typed, validated object. Every problem names its context key, so a failed synth says what to fix.
 */
import type { Construct } from 'constructs';
import {
  DEFAULT_INLINE_EVENT_BYTES,
  DEFAULT_OUTBOUND_PORTS,
  LAMBDA_REQUEST_LIMIT_BYTES,
  MAX_IDEMPOTENCY_TTL_SECONDS,
  parsePortList,
  QUEUE_MESSAGE_MARGIN_BYTES,
  settingEnv,
  SQS_MESSAGE_LIMIT_BYTES,
} from '../functions/config.js';
import { SINK_CREDENTIAL_POLICIES, type SinkCredentialPolicy } from '../functions/core/credentials/sink-credential.js';
import {
  DEFAULT_VALIDATION_HANDSHAKE,
  VALIDATION_HANDSHAKE_CHOICES,
  validationHandshakeOf,
  type ValidationHandshakePolicy,
} from '../functions/core/webhooks/handshake-policy.js';
import { parseEntitlements } from '../functions/core/subscriptions/entitlements.js';
import { parsePublishGrants, type PublishGrants } from '../functions/core/auth/publish-grants.js';
import {
  accessTokenTypeOf,
  accessTokenTypes,
  clientIdClaimProblem,
  DEFAULT_ACCESS_TOKEN_RULES,
  MAX_TOKEN_LIFETIME_LIMIT_SECONDS,
  scopeClaimNames,
  scopeClaimsOf,
  type AccessTokenType,
  type ScopeClaim,
} from '../functions/core/auth/access-token-rules.js';
import {
  identityProviderNames,
  identityProviderOf,
  identityProviderPresets,
  presetClientIdClaim,
  type IdentityProviderName,
} from '../functions/core/auth/identity-providers.js';
import { parseProtectionConfig, protectionContextKey, type ProtectionConfig } from './protection-config.js';
import { parseTlsConfig, tlsContextKey, type TlsConfig } from './tls-config.js';
import { parsePublicDomainConfig, publicDomainContextKey, type PublicDomainConfig } from './public-domain-config.js';
import { functions as functionSpecs } from '../functions/config/resources.js';
import { parseRuntimeSettings, runtimeSettings } from './runtime-settings.js';
import { egressContextKey, parseEgressConfig, type EgressConfig } from './egress-config.js';
import { parseLogRetentionDays, retentionContextKey } from './retention-config.js';
import { parseTrustConfig, TrustConfigError, trustContextKey } from './trust-config.js';
import { contextProblemsMessage, hostNameProblem, unknownSettingProblems } from './setting-checks.js';
import { readJsonSetting } from './json-setting.js';
import { capacityContextKey, capacityWarnings, parseCapacityConfig, type CapacityConfig } from './capacity-config.js';

export interface StackConfig {
  /** The CloudFormation stack name (default `Koerier`, or `Koerier-<stage>`): two stacks in one account differ in it. */
  readonly stackName: string;
  /** A label such as `test` or `prod`, tagged on every resource. */
  readonly stage?: string;
  /** The preset that filled the token rules and endpoints left unset (functions/core/auth/identity-providers.ts). */
  readonly identityProvider?: IdentityProviderName;
  /** The organisation's OAuth 2.0 issuer (`iss` of the access tokens). */
  readonly issuer: string;
  readonly audience: string;
  readonly jwksUrl: string;
  /** The issuer's token endpoint, published in the API description; absent: functions/config.ts's default. */
  readonly tokenUrl?: string;
  /** Which access tokens are accepted (review #17; functions/core/auth/access-tokens.ts `AccessTokenRules`). */
  readonly accessTokenType: AccessTokenType;
  readonly accessTokenMaxLifetimeMinutes: number;
  readonly clientIdClaim: string;
  readonly scopeClaims: readonly ScopeClaim[];
  readonly allowedOrigins: readonly string[];
  readonly webhookOrigin: string;
  /** The `source` of Koerier's own operational events (core/operations); absent: the API's URL. */
  readonly operationsSource?: string;
  readonly idempotencyTtlDays: number;
  /** The claim check (EDU-1): events above this travel by reference; absent: 64 KiB. */
  readonly inlineEventBytes?: number;
  /** The largest event POST /events accepts; absent: 4 MiB. */
  readonly maxEventBytes?: number;
  readonly entitlements: Readonly<Record<string, unknown>>;
  /** Which client may publish under which source prefixes (EDU-IN); see functions/core/auth/publish-grants.ts. */
  readonly publishers: PublishGrants;
  /** Subscribers whose webhooks may skip the validation handshake, agreed out of band (WH-5). */
  readonly validationAgreedClients: readonly string[];
  /**
   * Whose push subscriptions skip the handshake by default (functions/core/webhooks/handshake-policy.ts):
   * the profile's preset says (Edukoppeling: `agreed-for-directory-partners`), else `required` (NL GOV).
   */
  readonly validationHandshake: ValidationHandshakePolicy;
  readonly alarmEmail?: string;
  /** Out-of-band alerts' From address (issue 30 item 3), of an SES identity verified in the stack's region; absent: no alert e-mail. */
  readonly alertSender?: string;
  /** The console's public OpenID Connect client at `issuer` (authorization code + PKCE); absent: no console is deployed. */
  readonly consoleClientId?: string;
  /**
   * The domain prefix of the Cognito user pool the stack creates for the console when the
   * organisation has no OpenID Connect provider for it (`https://<prefix>.auth.<region>.amazoncognito.com`);
   * absent: no pool. Never together with `consoleClientId`.
   */
  readonly consoleUserPool?: string;
  /** Edge protection (review #20): throttles, reserved concurrency, CloudFront + WAF; see lib/protection-config.ts. */
  readonly protection: ProtectionConfig;
  /** TLS 1.2 or higher where CloudFront terminates it (EDU-4); see lib/tls-config.ts. */
  readonly tls: TlsConfig;
  /** The API's public name (`koerier:publicDomain`, issue 31 item 1): every link names it; absent: the execute-api URL. */
  readonly publicDomain?: PublicDomainConfig;
  /** Fixed egress addresses for the outbound functions (issue 12, item 4); see lib/egress-config.ts. */
  readonly egress: EgressConfig;
  /** Days every log group of the stack keeps its logs (issue 31 item 4); see lib/retention-config.ts. */
  readonly logRetentionDays: number;
  /**
   * Which sink credentials subscriptions may carry (WH-3, EDU-4): `oauth2-only` (default, as the
   * Edukoppeling profile asks) or `bearer-or-oauth2` (NL GOV deployments whose subscribers hand
   * out static tokens).
   */
  readonly sinkCredentials: SinkCredentialPolicy;
  /** Ports sinks and token URLs may name (default [443]): any port would let Koerier be used to scan ports. */
  readonly outboundPorts: readonly number[];
  /** The function settings of lib/runtime-settings.ts given in the context; the rest keep the functions' defaults. */
  readonly runtimeSettings: Readonly<Record<string, string>>;
  /** Per queue-triggered function of functions/config/resources.ts: seconds SQS gathers messages before invoking it. */
  readonly batchingWindowSeconds: Readonly<Record<string, number>>;
  /** Per queue-triggered function of functions/config/resources.ts: the most messages one invocation is given. */
  readonly batchSizes: Readonly<Record<string, number>>;
  /** Issue 35: provisioned pollers and warm throughput (lib/capacity-config.ts); empty: AWS's defaults. */
  readonly capacity: CapacityConfig;
}

/** What a required key looks like, shown when it is missing or wrong. */
export const requiredExamples = {
  'koerier:issuer': 'https://login.example.org/realms/koerier',
  'koerier:audience': 'koerier',
  'koerier:jwksUrl': 'https://login.example.org/realms/koerier/protocol/openid-connect/certs',
  'koerier:allowedOrigins': 'events.partner.example.org',
  'koerier:webhookOrigin': 'koerier.example.org',
  'koerier:publishers': '\'{"partner-lvs":["urn:nld:oin:00000001823288444000:"]}\'',
} as const;

export const contextKey = {
  stackName: 'koerier:stackName',
  stage: 'koerier:stage',
  identityProvider: 'koerier:identityProvider',
  scopeClaims: 'koerier:scopeClaims',
  batchingWindowSeconds: 'koerier:batchingWindowSeconds',
  batchSizes: 'koerier:batchSizes',
  issuer: 'koerier:issuer',
  audience: 'koerier:audience',
  jwksUrl: 'koerier:jwksUrl',
  tokenUrl: 'koerier:tokenUrl',
  accessTokenType: 'koerier:accessTokenType',
  accessTokenMaxLifetimeMinutes: 'koerier:accessTokenMaxLifetimeMinutes',
  clientIdClaim: 'koerier:clientIdClaim',
  allowedOrigins: 'koerier:allowedOrigins',
  webhookOrigin: 'koerier:webhookOrigin',
  operationsSource: 'koerier:operationsSource',
  idempotencyTtlDays: 'koerier:idempotencyTtlDays',
  inlineEventBytes: 'koerier:inlineEventBytes',
  maxEventBytes: 'koerier:maxEventBytes',
  entitlements: 'koerier:entitlements',
  publishers: 'koerier:publishers',
  validationAgreedClients: 'koerier:validationAgreedClients',
  validationHandshake: 'koerier:validationHandshake',
  alarmEmail: 'koerier:alarmEmail',
  alertSender: 'koerier:alertSender',
  consoleClientId: 'koerier:consoleClientId',
  consoleUserPool: 'koerier:consoleUserPool',
  ...protectionContextKey,
  ...tlsContextKey,
  ...publicDomainContextKey,
  ...egressContextKey,
  ...retentionContextKey,
  ...trustContextKey,
  sinkCredentials: 'koerier:sinkCredentials',
  outboundPorts: 'koerier:outboundPorts',
  /** Read by lib/koerier-stack.ts itself (no validation beyond its partition, lib/regions.ts). */
  powertoolsLayerArn: 'koerier:powertoolsLayerArn',
  // Issue 35: read by lib/constructs/disaster-recovery.ts.
  bucketReplicas: 'koerier:bucketReplicas',
  globalTableRegions: 'koerier:globalTableRegions',
  // Issue 35: read by lib/standby-config.ts.
  standby: 'koerier:standby',
  apiHostedZoneId: 'koerier:apiHostedZoneId',
  multiRegionKeys: 'koerier:multiRegionKeys',
  globalTableConsistency: 'koerier:globalTableConsistency',
  globalTableWitnessRegion: 'koerier:globalTableWitnessRegion',
  ...capacityContextKey,
} as const;

export class StackConfigError extends Error {
  override name = 'StackConfigError';
}

export const DEFAULT_IDEMPOTENCY_TTL_DAYS = 7;
/**
 * Lambda allows 4 KB of environment variables per function, shared with the resource names and
 * the other settings; the entitlements get at most half of it.
 */
export const MAX_ENTITLEMENTS_JSON_BYTES = 2048;

export function readStackConfig(scope: Construct): StackConfig {
  const context: Record<string, unknown> = {};
  for (const key of [...Object.values(contextKey), ...runtimeSettings.map((setting) => setting.contextKey)])
    context[key] = scope.node.tryGetContext(key);
  // Every `koerier:*` key given, so a misspelt one is refused rather than silently ignored.
  for (const [key, value] of Object.entries(scope.node.getAllContext() as Record<string, unknown>))
    if (key.startsWith('koerier:') && !(key in context)) context[key] = value;
  return parseStackConfig(context);
}

/** Validates raw context values; throws one `StackConfigError` listing every problem found. */
export function parseStackConfig(context: Readonly<Record<string, unknown>>): StackConfig {
  const issues: string[] = unknownSettingProblems(Object.keys(context));
  const problem = (key: string, what: string, value: unknown) =>
    issues.push(`${key} ${what}, got ${value === undefined ? 'nothing' : JSON.stringify(value)}`);

  const example = (key: string) =>
    key in requiredExamples ? `, e.g. -c ${key}=${requiredExamples[key as keyof typeof requiredExamples]}` : '';
  const text = (key: string): string => {
    const value = context[key];
    if (typeof value !== 'string' || value.trim() === '') {
      problem(key, `is required: a non-empty string${example(key)}`, value);
      return '';
    }
    return value.trim();
  };
  const httpsUrl = (key: string): string => {
    const value = text(key);
    if (value && !isHttpsUrl(value)) problem(key, `must be an https URL${example(key)}`, value);
    return value;
  };
  // A bare token: these values travel comma-joined in one environment variable.
  // JSON text that does not parse is reported here, once, as invalid JSON; the key's own checks are then skipped.
  const json = (key: string, example: string): unknown => {
    const read = readJsonSetting(key, context[key], example);
    if ('value' in read) return read.value;
    issues.push(read.invalid);
    return INVALID_JSON;
  };
  const token = (key: string, value: string) => {
    if (/[\s,]/.test(value)) problem(key, 'must not contain spaces or commas', value);
    return value;
  };

  let stage: string | undefined;
  const stageRaw = context[contextKey.stage];
  if (stageRaw !== undefined) {
    if (typeof stageRaw === 'string' && STAGE.test(stageRaw.trim())) stage = stageRaw.trim();
    else
      problem(
        contextKey.stage,
        'must be lower-case letters, digits and dashes, at most 16, e.g. -c koerier:stage=test',
        stageRaw,
      );
  }
  let stackName = stage === undefined ? DEFAULT_STACK_NAME : `${DEFAULT_STACK_NAME}-${stage}`;
  const stackNameRaw = context[contextKey.stackName];
  if (stackNameRaw !== undefined) {
    if (typeof stackNameRaw === 'string' && STACK_NAME.test(stackNameRaw.trim())) stackName = stackNameRaw.trim();
    else
      problem(
        contextKey.stackName,
        'must be a CloudFormation stack name (a letter, then letters, digits and dashes, at most 100), e.g. -c koerier:stackName=Koerier-test',
        stackNameRaw,
      );
  }

  let identityProvider: IdentityProviderName | undefined;
  const providerRaw = context[contextKey.identityProvider];
  if (providerRaw !== undefined) {
    identityProvider = typeof providerRaw === 'string' ? identityProviderOf(providerRaw) : undefined;
    if (identityProvider === undefined)
      problem(
        contextKey.identityProvider,
        `must be ${identityProviderNames.map((n) => `"${n}"`).join(', ')} or left out`,
        providerRaw,
      );
  }
  const preset = identityProvider === undefined ? undefined : identityProviderPresets[identityProvider];

  const issuesBeforeIssuer = issues.length;
  const issuer = httpsUrl(contextKey.issuer);
  const issuerFailed = issues.length > issuesBeforeIssuer;
  const audience = text(contextKey.audience);
  const endpoints = preset && issuer ? preset.endpoints(issuer.replace(/\/+$/, '')) : undefined;
  // A preset that knows where its provider publishes keys spares the deployment two URLs, and the
  // token URL shown to partners then always belongs to the same issuer.
  // A preset that failed (a wrong name, or no issuer to derive from) has been reported; the JWKS
  // URL it would have derived is then not also reported missing.
  const presetFailed =
    (providerRaw !== undefined && identityProvider === undefined) || (preset !== undefined && issuerFailed);
  const jwksUrl =
    endpoints && context[contextKey.jwksUrl] === undefined
      ? endpoints.jwksUrl
      : presetFailed && context[contextKey.jwksUrl] === undefined
        ? ''
        : httpsUrl(contextKey.jwksUrl);
  const tokenUrl = context[contextKey.tokenUrl] === undefined ? endpoints?.tokenUrl : httpsUrl(contextKey.tokenUrl);
  const webhookOriginText = text(contextKey.webhookOrigin);
  const webhookOriginProblem =
    webhookOriginText === '' || /[\s,]/.test(webhookOriginText) ? undefined : hostNameProblem(webhookOriginText);
  if (webhookOriginProblem) problem(contextKey.webhookOrigin, webhookOriginProblem, webhookOriginText);
  const webhookOrigin = webhookOriginProblem ? webhookOriginText : token(contextKey.webhookOrigin, webhookOriginText);
  const operationsSource =
    context[contextKey.operationsSource] === undefined ? undefined : text(contextKey.operationsSource);

  let accessTokenType: AccessTokenType = preset?.tokenType ?? DEFAULT_ACCESS_TOKEN_RULES.tokenType;
  const typeRaw = context[contextKey.accessTokenType];
  if (typeRaw !== undefined) {
    const type = typeof typeRaw === 'string' ? accessTokenTypeOf(typeRaw) : undefined;
    if (type === undefined)
      problem(contextKey.accessTokenType, `must be ${accessTokenTypes.map((t) => `"${t}"`).join(' or ')}`, typeRaw);
    else accessTokenType = type;
  }

  const maxLifetimeMinutes = MAX_TOKEN_LIFETIME_LIMIT_SECONDS / 60;
  let accessTokenMaxLifetimeMinutes = DEFAULT_ACCESS_TOKEN_RULES.maxLifetimeSeconds / 60;
  const lifetimeRaw = context[contextKey.accessTokenMaxLifetimeMinutes];
  if (lifetimeRaw !== undefined) {
    const minutes = typeof lifetimeRaw === 'string' && lifetimeRaw.trim() !== '' ? Number(lifetimeRaw) : lifetimeRaw;
    if (typeof minutes !== 'number' || !Number.isInteger(minutes) || minutes < 1 || minutes > maxLifetimeMinutes) {
      problem(
        contextKey.accessTokenMaxLifetimeMinutes,
        `must be a whole number of minutes from 1 to ${maxLifetimeMinutes}`,
        lifetimeRaw,
      );
    } else {
      accessTokenMaxLifetimeMinutes = minutes;
    }
  }

  let clientIdClaim =
    identityProvider === undefined
      ? DEFAULT_ACCESS_TOKEN_RULES.clientIdClaim
      : presetClientIdClaim(identityProvider, issuer);
  const claimRaw = context[contextKey.clientIdClaim];
  if (claimRaw !== undefined) {
    const claimProblem = typeof claimRaw === 'string' ? clientIdClaimProblem(claimRaw.trim()) : 'must be a claim name';
    if (claimProblem) problem(contextKey.clientIdClaim, claimProblem, claimRaw);
    else clientIdClaim = (claimRaw as string).trim();
  }
  let scopeClaims: readonly ScopeClaim[] = preset?.scopeClaims ?? DEFAULT_ACCESS_TOKEN_RULES.scopeClaims;
  const scopeClaimsRaw = context[contextKey.scopeClaims];
  if (scopeClaimsRaw !== undefined) {
    const names =
      Array.isArray(scopeClaimsRaw) && scopeClaimsRaw.every((n) => typeof n === 'string')
        ? scopeClaimsRaw.join(',')
        : scopeClaimsRaw;
    const parsed = typeof names === 'string' ? scopeClaimsOf(names) : undefined;
    if (parsed === undefined)
      problem(
        contextKey.scopeClaims,
        `must name claims among ${scopeClaimNames.join(', ')}, e.g. ["roles"]`,
        scopeClaimsRaw,
      );
    else scopeClaims = parsed;
  }

  const allowedOrigins = stringList(context[contextKey.allowedOrigins]);
  if (allowedOrigins === undefined || allowedOrigins.length === 0) {
    problem(
      contextKey.allowedOrigins,
      `is required: a non-empty list of origins (or "*")${example(contextKey.allowedOrigins)}`,
      context[contextKey.allowedOrigins],
    );
  } else {
    for (const origin of allowedOrigins) {
      // Spaces and commas are reported as such (the list travels comma-joined), not as "no host name".
      const notHost = origin === '*' || /[\s,]/.test(origin) ? undefined : hostNameProblem(origin, true);
      // One line per origin: the handshake compares each one, so each one to fix is named.
      if (notHost) problem(contextKey.allowedOrigins, notHost, origin);
      else token(contextKey.allowedOrigins, origin);
    }
  }

  let idempotencyTtlDays = DEFAULT_IDEMPOTENCY_TTL_DAYS;
  const ttlRaw = context[contextKey.idempotencyTtlDays];
  if (ttlRaw !== undefined) {
    const ttl = typeof ttlRaw === 'string' && ttlRaw.trim() !== '' ? Number(ttlRaw) : ttlRaw;
    // functions/config.ts accepts at most 13 days: deliveries retry that long, and SQS keeps a message 14.
    const maxDays = MAX_IDEMPOTENCY_TTL_SECONDS / (24 * 3600);
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > maxDays) {
      problem(contextKey.idempotencyTtlDays, `must be a whole number of days from 1 to ${maxDays}`, ttlRaw);
    } else {
      idempotencyTtlDays = ttl;
    }
  }

  let entitlements: Record<string, unknown> = {};
  const entitlementsRaw = context[contextKey.entitlements];
  const entitlementsValue =
    entitlementsRaw === undefined
      ? undefined
      : json(contextKey.entitlements, '{"partner-ontvanger":[{"typePrefix":"nl.edu.leerling."}]}');
  if (entitlementsRaw !== undefined && entitlementsValue !== INVALID_JSON) {
    const parsed = asObject(entitlementsValue);
    const bytes = parsed === undefined ? 0 : Buffer.byteLength(JSON.stringify(parsed));
    if (parsed === undefined) {
      problem(contextKey.entitlements, 'must be a JSON object', entitlementsRaw);
    } else if (bytes > MAX_ENTITLEMENTS_JSON_BYTES) {
      issues.push(
        `${contextKey.entitlements} must serialise to at most ${MAX_ENTITLEMENTS_JSON_BYTES} bytes ` +
          `(it travels in ${settingEnv.entitlements} and Lambda allows 4 KB of environment in total), got ${bytes} bytes`,
      );
    } else {
      try {
        parseEntitlements(JSON.stringify(parsed));
        entitlements = parsed;
      } catch (error) {
        issues.push(`${contextKey.entitlements} ${(error as Error).message}`);
      }
    }
  }

  // Required: without grants nobody may publish, and a deployment nobody can publish to is a mistake.
  let publishers: PublishGrants = {};
  const publishersRaw = context[contextKey.publishers];
  const publishersValue =
    publishersRaw === undefined
      ? undefined
      : json(contextKey.publishers, '{"partner-lvs":["urn:nld:oin:00000001823288444000:"]}');
  const publishersObject = asObject(publishersValue);
  if (publishersValue === INVALID_JSON) {
    // Reported as invalid JSON above.
  } else if (publishersObject === undefined || Object.keys(publishersObject).length === 0) {
    problem(
      contextKey.publishers,
      `is required: an object {"<client id>": ["<source grant>", ...]}${example(contextKey.publishers)}`,
      publishersRaw,
    );
  } else {
    try {
      publishers = parsePublishGrants(JSON.stringify(publishersObject));
    } catch (error) {
      issues.push(`${contextKey.publishers} ${(error as Error).message}`);
    }
  }

  const agreedRaw = context[contextKey.validationAgreedClients];
  const validationAgreedClients = agreedRaw === undefined ? [] : stringList(agreedRaw);
  if (validationAgreedClients === undefined) {
    problem(contextKey.validationAgreedClients, 'must be a list of client ids', agreedRaw);
  } else {
    for (const client of validationAgreedClients) token(contextKey.validationAgreedClients, client);
  }

  let alarmEmail: string | undefined;
  const emailRaw = context[contextKey.alarmEmail];
  if (emailRaw !== undefined) {
    if (typeof emailRaw !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(emailRaw.trim())) {
      problem(contextKey.alarmEmail, 'must be an email address', emailRaw);
    } else {
      alarmEmail = emailRaw.trim();
    }
  }

  let alertSender: string | undefined;
  const senderRaw = context[contextKey.alertSender];
  if (senderRaw !== undefined) {
    if (typeof senderRaw !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(senderRaw.trim())) {
      problem(contextKey.alertSender, 'must be an email address of a verified SES identity', senderRaw);
    } else {
      alertSender = senderRaw.trim();
    }
  }

  const consoleRaw = context[contextKey.consoleClientId];
  let consoleClientId: string | undefined;
  if (consoleRaw !== undefined) {
    if (typeof consoleRaw !== 'string' || consoleRaw.trim() === '')
      problem(contextKey.consoleClientId, 'must be the client id of the console at the issuer', consoleRaw);
    else consoleClientId = token(contextKey.consoleClientId, consoleRaw.trim());
  }
  const poolRaw = context[contextKey.consoleUserPool];
  let consoleUserPool: string | undefined;
  if (poolRaw !== undefined) {
    if (
      typeof poolRaw !== 'string' ||
      !COGNITO_DOMAIN_PREFIX.test(poolRaw.trim()) ||
      /aws|amazon|cognito/.test(poolRaw)
    ) {
      problem(
        contextKey.consoleUserPool,
        'must be the sign-in domain prefix for the console\'s user pool: lower-case letters, digits and hyphens, 1 to 63, not starting or ending with a hyphen, without "aws", "amazon" or "cognito"',
        poolRaw,
      );
    } else if (consoleClientId !== undefined) {
      problem(
        contextKey.consoleUserPool,
        `cannot go with ${contextKey.consoleClientId}: the console signs in at the organisation's issuer or at a user pool the stack creates`,
        poolRaw,
      );
    } else consoleUserPool = poolRaw.trim();
  }

  const protection = parseProtectionConfig(context, issues);
  const cloudFront = {
    // A wrong koerier:edgeProtection is reported; whether the edge names then apply is not known.
    edge: issues.some((issue) => issue.startsWith(`${contextKey.edgeProtection} `))
      ? undefined
      : protection.edge.mode === 'cloudfront-waf',
    console: consoleRaw !== undefined || poolRaw !== undefined,
  };
  const tls = parseTlsConfig(context, issues, cloudFront);
  const publicDomain = parsePublicDomainConfig(context, issues, cloudFront.edge);
  const egress = parseEgressConfig(context, issues);
  const logRetentionDays = parseLogRetentionDays(context, issues);
  // Read again by the stack (lib/koerier-stack.ts); checked here so one synth reports every problem.
  try {
    parseTrustConfig(context);
  } catch (error) {
    if (!(error instanceof TrustConfigError)) throw error;
    issues.push(...error.issues);
  }
  let sinkCredentials: SinkCredentialPolicy = 'oauth2-only';
  const sinkCredentialsRaw = context[contextKey.sinkCredentials];
  if (sinkCredentialsRaw !== undefined) {
    if (
      typeof sinkCredentialsRaw === 'string' &&
      SINK_CREDENTIAL_POLICIES.includes(sinkCredentialsRaw.trim() as SinkCredentialPolicy)
    ) {
      sinkCredentials = sinkCredentialsRaw.trim() as SinkCredentialPolicy;
    } else {
      problem(contextKey.sinkCredentials, `must be ${SINK_CREDENTIAL_POLICIES.join(' or ')}`, sinkCredentialsRaw);
    }
  }
  if (preset?.oauth2SinksOnly && sinkCredentials !== 'oauth2-only') {
    problem(
      contextKey.sinkCredentials,
      `must be "oauth2-only" with koerier:identityProvider "${identityProvider}" (its profile asks OAuth2 towards every party)`,
      sinkCredentialsRaw,
    );
  }

  let validationHandshake = preset?.validationHandshake ?? DEFAULT_VALIDATION_HANDSHAKE;
  const handshakeRaw = context[contextKey.validationHandshake];
  if (handshakeRaw !== undefined) {
    const policy = typeof handshakeRaw === 'string' ? validationHandshakeOf(handshakeRaw) : undefined;
    if (policy === undefined)
      problem(contextKey.validationHandshake, `must be ${VALIDATION_HANDSHAKE_CHOICES}`, handshakeRaw);
    else validationHandshake = policy;
  }
  // The profile takes the partner's OAuth2 grant as its consent; a static token is no such grant.
  // (Derived from the preset, the preset's own rule on sink credentials has said so already.)
  if (
    handshakeRaw !== undefined &&
    validationHandshake === 'agreed-for-directory-partners' &&
    sinkCredentials !== 'oauth2-only'
  ) {
    problem(
      contextKey.validationHandshake,
      `"${validationHandshake}" needs ${contextKey.sinkCredentials} "oauth2-only" (the partner's OAuth2 grant is its consent)`,
      handshakeRaw,
    );
  }

  let outboundPorts: readonly number[] = DEFAULT_OUTBOUND_PORTS;
  const portsRaw = context[contextKey.outboundPorts];
  if (portsRaw !== undefined) {
    const text =
      Array.isArray(portsRaw) && portsRaw.every((port) => typeof port === 'number' || typeof port === 'string')
        ? portsRaw.join(',')
        : portsRaw;
    const ports =
      typeof text === 'string'
        ? parsePortList(text)
        : typeof text === 'number'
          ? parsePortList(String(text))
          : undefined;
    if (ports === undefined)
      problem(contextKey.outboundPorts, 'must be a list of ports from 1 to 65535 (e.g. [443, 8443])', portsRaw);
    else outboundPorts = ports;
  }

  // The same bounds functions/config.ts enforces at start-up, checked here at synth.
  const bytes = (key: string, min: number, max: number): number | undefined => {
    const raw = context[key];
    if (raw === undefined) return undefined;
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
    problem(key, `must be a whole number of bytes from ${min} to ${max}`, raw);
    return undefined;
  };
  const inlineEventBytes = bytes(
    contextKey.inlineEventBytes,
    DEFAULT_INLINE_EVENT_BYTES,
    SQS_MESSAGE_LIMIT_BYTES - QUEUE_MESSAGE_MARGIN_BYTES,
  );
  const maxEventBytes = bytes(contextKey.maxEventBytes, 1024, LAMBDA_REQUEST_LIMIT_BYTES);
  const runtime = parseRuntimeSettings(context, issues);
  const batchingWindowSeconds = parseBatchingWindows(context[contextKey.batchingWindowSeconds], issues);
  const batchSizes = parseBatchSizes(context[contextKey.batchSizes], batchingWindowSeconds, issues);
  const capacity = parseCapacityConfig(context, issues);

  if (issues.length > 0) throw new StackConfigError(contextProblemsMessage(issues));
  return {
    stackName,
    ...(stage === undefined ? {} : { stage }),
    ...(identityProvider === undefined ? {} : { identityProvider }),
    issuer,
    audience,
    jwksUrl,
    ...(tokenUrl === undefined ? {} : { tokenUrl }),
    accessTokenType,
    accessTokenMaxLifetimeMinutes,
    clientIdClaim,
    scopeClaims,
    allowedOrigins: allowedOrigins ?? [],
    webhookOrigin,
    ...(operationsSource === undefined ? {} : { operationsSource }),
    idempotencyTtlDays,
    ...(inlineEventBytes === undefined ? {} : { inlineEventBytes }),
    ...(maxEventBytes === undefined ? {} : { maxEventBytes }),
    entitlements,
    publishers,
    validationAgreedClients: validationAgreedClients ?? [],
    validationHandshake,
    ...(alarmEmail === undefined ? {} : { alarmEmail }),
    ...(alertSender === undefined ? {} : { alertSender }),
    ...(consoleClientId === undefined ? {} : { consoleClientId }),
    ...(consoleUserPool === undefined ? {} : { consoleUserPool }),
    protection,
    tls,
    ...(publicDomain === undefined ? {} : { publicDomain }),
    egress,
    logRetentionDays,
    sinkCredentials,
    outboundPorts,
    runtimeSettings: runtime,
    batchingWindowSeconds,
    batchSizes,
    capacity,
  };
}

const DEFAULT_STACK_NAME = 'Koerier';
/** Cognito's rule for a prefix domain (the words it reserves are checked beside it). */
const COGNITO_DOMAIN_PREFIX = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const STAGE = /^[a-z][a-z0-9-]{0,15}$/;
// CloudFormation allows 128; the us-east-1 edge stack appends "Edge" and CDK derives names from it.
const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,99}$/;
/** Lambda's SQS event source gathers for at most 300 seconds. */
const MAX_BATCHING_WINDOW_SECONDS = 300;

/**
 * The most messages one invocation may be given. SQS's event source takes up to 10,000; Koerier
 * stops at 100, where the per-batch requests (the router's archive object, index read and ledger
 * commit) are already a hundredth of a request per event and one commit item still holds the batch.
 */
const MAX_BATCH_SIZE = 100;
/** Above this many messages a batch, SQS's event source demands a batching window of at least a second. */
const MAX_BATCH_SIZE_WITHOUT_WINDOW = 10;

/** The queue-triggered functions of functions/config/resources.ts and their batching windows as described there. */
export function defaultBatchingWindows(): Record<string, number> {
  const windows: Record<string, number> = {};
  for (const [name, spec] of Object.entries(functionSpecs)) {
    if ('queueTrigger' in spec) windows[name] = spec.queueTrigger.maxBatchingWindowSeconds;
  }
  return windows;
}

/** The queue-triggered functions of functions/config/resources.ts and their batch sizes as described there. */
export function defaultBatchSizes(): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const [name, spec] of Object.entries(functionSpecs)) {
    if ('queueTrigger' in spec) sizes[name] = spec.queueTrigger.batchSize;
  }
  return sizes;
}

function parseBatchingWindows(raw: unknown, issues: string[]): Record<string, number> {
  return parsePerQueueFunction(raw, contextKey.batchingWindowSeconds, defaultBatchingWindows(), issues, {
    example: '{"router": 1, "delivery": 0}',
    unit: 'seconds',
    min: 0,
    max: MAX_BATCHING_WINDOW_SECONDS,
  });
}

/**
 * The functions whose batch size may be set. The router routes a batch's records side by side well
 * within its timeout (100 in 0.3–0.7 s on the laptop); the delivery function's attempts wait on
 * their targets' rate slots, and the replay worker runs its jobs one after another, so a larger
 * batch of theirs could outlast their timeouts.
 */
const SETTABLE_BATCH_SIZES = ['router'];

function parseBatchSizes(
  raw: unknown,
  windows: Readonly<Record<string, number>>,
  issues: string[],
): Record<string, number> {
  const key = contextKey.batchSizes;
  const sizes = parsePerQueueFunction(raw, key, defaultBatchSizes(), issues, {
    example: '{"router": 100}',
    unit: 'messages',
    min: 1,
    max: MAX_BATCH_SIZE,
    settable: { names: SETTABLE_BATCH_SIZES, what: 'batch size' },
  });
  for (const [name, size] of Object.entries(sizes)) {
    if (size > MAX_BATCH_SIZE_WITHOUT_WINDOW && (windows[name] ?? 0) < 1) {
      issues.push(
        `${key} of "${name}" is ${size}, and SQS gives a function more than ${MAX_BATCH_SIZE_WITHOUT_WINDOW} messages only with a batching window of at least 1 second (${contextKey.batchingWindowSeconds} of "${name}" is ${windows[name] ?? 0})`,
      );
    }
  }
  return sizes;
}

/** An object of whole numbers per queue-triggered function, e.g. `{"router": 1}`: the defaults, with the values given in their place. */
function parsePerQueueFunction(
  raw: unknown,
  key: string,
  defaults: Record<string, number>,
  issues: string[],
  bounds: {
    readonly example: string;
    readonly unit: string;
    readonly min: number;
    readonly max: number;
    /** The functions whose value may be given, and what the value is called; default: every function. */
    readonly settable?: { readonly names: readonly string[]; readonly what: string };
  },
): Record<string, number> {
  const values = { ...defaults };
  if (raw === undefined) return values;
  const names = Object.keys(values);
  const read = readJsonSetting(key, raw, bounds.example);
  if ('invalid' in read) {
    issues.push(read.invalid);
    return values;
  }
  const given = asObject(read.value);
  if (given === undefined) {
    issues.push(
      `${key} must be an object of ${bounds.unit} per function, e.g. ${bounds.example}, got ${JSON.stringify(raw)}`,
    );
    return values;
  }
  for (const [name, value] of Object.entries(given)) {
    if (!names.includes(name))
      issues.push(`${key} names "${name}", which is no queue-triggered function (${names.join(', ')})`);
    else if (bounds.settable && !bounds.settable.names.includes(name)) {
      issues.push(
        `${key} names "${name}", whose ${bounds.settable.what} is fixed: only ${bounds.settable.names.join(', ')} can be set`,
      );
    } else if (typeof value !== 'number' || !Number.isInteger(value) || value < bounds.min || value > bounds.max) {
      issues.push(
        `${key} of "${name}" must be a whole number of ${bounds.unit} from ${bounds.min} to ${bounds.max}, got ${JSON.stringify(value)}`,
      );
    } else values[name] = value;
  }
  return values;
}

/**
 * The function settings (names from `settingEnv` in functions/config.ts) this configuration
 * fills. `publicBaseUrl` is the HTTP API's URL, known only inside the stack.
 */
export function settingEnvironment(config: StackConfig, publicBaseUrl: string): Record<string, string> {
  return {
    [settingEnv.issuer]: config.issuer,
    [settingEnv.audience]: config.audience,
    [settingEnv.jwksUrl]: config.jwksUrl,
    ...(config.tokenUrl === undefined ? {} : { [settingEnv.tokenUrl]: config.tokenUrl }),
    [settingEnv.accessTokenType]: config.accessTokenType,
    [settingEnv.accessTokenMaxLifetimeSeconds]: String(config.accessTokenMaxLifetimeMinutes * 60),
    [settingEnv.clientIdClaim]: config.clientIdClaim,
    [settingEnv.scopeClaims]: config.scopeClaims.join(','),
    [settingEnv.allowedOrigins]: config.allowedOrigins.join(','),
    [settingEnv.webhookOrigin]: config.webhookOrigin,
    ...(config.alertSender === undefined ? {} : { [settingEnv.alertSender]: config.alertSender }),
    ...(config.operationsSource === undefined ? {} : { [settingEnv.operationsSource]: config.operationsSource }),
    [settingEnv.idempotencyTtlSeconds]: String(config.idempotencyTtlDays * 24 * 3600),
    ...(config.inlineEventBytes === undefined
      ? {}
      : { [settingEnv.inlineEventBytes]: String(config.inlineEventBytes) }),
    ...(config.maxEventBytes === undefined ? {} : { [settingEnv.maxEventBytes]: String(config.maxEventBytes) }),
    [settingEnv.entitlements]: JSON.stringify(config.entitlements),
    [settingEnv.publishers]: JSON.stringify(config.publishers),
    [settingEnv.validationAgreedClients]: config.validationAgreedClients.join(','),
    [settingEnv.validationHandshake]: config.validationHandshake,
    [settingEnv.publicBaseUrl]: publicBaseUrl,
    [settingEnv.stackName]: config.stackName,
    ...(config.protection.publishRatePerMinute === undefined
      ? {}
      : { [settingEnv.publishRatePerMinute]: String(config.protection.publishRatePerMinute) }),
    ...(config.protection.manageRatePerMinute === undefined
      ? {}
      : { [settingEnv.manageRatePerMinute]: String(config.protection.manageRatePerMinute) }),
    [settingEnv.sinkCredentials]: config.sinkCredentials,
    [settingEnv.outboundPorts]: config.outboundPorts.join(','),
    ...config.runtimeSettings,
  };
}

function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A list in cdk.json, or a comma-separated string from `-c koerier:allowedOrigins=a,b`. */
function stringList(value: unknown): string[] | undefined {
  const items = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : undefined;
  if (items === undefined || !items.every((item) => typeof item === 'string')) return undefined;
  return items.map((item: string) => item.trim()).filter((item) => item !== '');
}

const INVALID_JSON = Symbol('invalid JSON');

/** A JSON object's value (from cdk.json, or parsed from `-c` text), or undefined for anything else. */
function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A setting that is valid but probably not meant: printed by the synth, not failing it. */
export interface StackConfigWarning {
  /** For `cdk synth --strict` users to acknowledge (Annotations' acknowledgeWarning). */
  readonly id: string;
  readonly message: string;
}

/** A stage that names production: `prod`, `production`, or one of them followed by a dash. */
const PRODUCTION_STAGE = /^prod(?:uction)?(?:-|$)/;

export function stackConfigWarnings(config: StackConfig): StackConfigWarning[] {
  const warnings: StackConfigWarning[] = [];
  if (config.alarmEmail === undefined)
    warnings.push({
      id: 'Koerier::NoAlarmEmail',
      message: `${contextKey.alarmEmail} is not set: the alarms (dead letters, function errors) go to an SNS topic nobody is subscribed to, so no alarm reaches anyone; give -c ${contextKey.alarmEmail}=operations@example.org, or subscribe to the topic yourself`,
    });
  if (
    config.sinkCredentials === 'bearer-or-oauth2' &&
    config.stage !== undefined &&
    PRODUCTION_STAGE.test(config.stage)
  )
    warnings.push({
      id: 'Koerier::BearerSinkCredentialsInProduction',
      message: `${contextKey.sinkCredentials} "bearer-or-oauth2" in stage "${config.stage}": subscriptions may carry static bearer tokens towards their targets, which never expire and are not what the Edukoppeling profile asks (EDU-4); prefer "oauth2-only" in production`,
    });
  warnings.push(...capacityWarnings(config.capacity));
  return warnings;
}
