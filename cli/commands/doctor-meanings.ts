/**
 * What a failed `koerier doctor` step usually means after a deploy: the answer it got (status,
 * problem type, WWW-Authenticate) turned into the setting, grant or quota to look at. The texts
 * name the CDK context keys and partner-directory fields of docs/DEPLOYING.md and
 * docs/OPERATIONS.md, so an operator can go from the row to the fix.
 */
import { describeProblem, problemOf, type ApiAnswer } from '../api-client.js';

/** Which part of the gateway a step exercises: the same status means different things in each. */
export type StepKind =
  | 'description'
  | 'health'
  | 'token'
  | 'unauthenticated'
  | 'subscribe'
  | 'publish'
  | 'publish-large'
  | 'idempotency'
  | 'broken-event'
  | 'receive'
  | 'payload'
  | 'acknowledge'
  | 'cleanup';

export interface Party {
  /** The client id the step acts as. */
  readonly clientId: string;
  /** `publisher` or `consumer`, for the advice (which grant or scope). */
  readonly role: 'publisher' | 'consumer';
}

export interface Situation {
  readonly kind: StepKind;
  readonly party?: Party;
  readonly source?: string;
  readonly type?: string;
}

/** The problem type's last path segment (`/v1/problems/forbidden` → `forbidden`), if the answer is a problem. */
export function problemSlug(answer: ApiAnswer): string | undefined {
  const type = problemOf(answer)?.type;
  return typeof type === 'string' ? type.split('/').pop() : undefined;
}

/** What a step got, on one line: the status, the problem's title, type and detail, the first issue, and a Bearer challenge. */
export function gotOf(answer: ApiAnswer): string {
  const lines = describeProblem(answer).split('\n');
  const challenge = answer.headers.get('www-authenticate');
  const first = [lines[0], lines[1]?.trim()].filter(Boolean).join(' ');
  return challenge && answer.status >= 400 ? `${first} [WWW-Authenticate: ${challenge}]` : first;
}

const IDP_SETTINGS =
  'the identity provider settings of the stack do not match its tokens: koerier:issuer (iss), koerier:audience (aud), koerier:jwksUrl, ' +
  'koerier:accessTokenType (typ), koerier:clientIdClaim, koerier:accessTokenMaxLifetimeMinutes; the error_description says which ' +
  '(docs/DEPLOYING.md, "Identity provider").';

const FUNCTION_LOGS =
  "the function's CloudWatch log group names the cause; right after a deploy usually a missing IAM grant (AccessDenied), a KMS key " +
  'policy or disabled key (KMS AccessDeniedException, KMSInvalidStateException), or a setting the function refused at start.';

/** What an HTTP answer that was not the expected one usually means, in the situation of the step. */
export function meaningOfAnswer(answer: ApiAnswer, situation: Situation): string {
  const slug = problemSlug(answer);
  const who = situation.party?.clientId ?? 'the client';
  const challenge = answer.headers.get('www-authenticate') ?? '';
  switch (answer.status) {
    case 401:
      return `the gateway refused ${who}'s token: ${IDP_SETTINGS}`;
    case 403:
      return forbidden(slug, who, challenge, situation);
    case 404:
      if (situation.kind === 'description')
        return 'KOERIER_URL is not the API: use the stack output ApiUrl, with its major version (https://…/v1).';
      if (situation.kind === 'payload') {
        return `the data is not there for ${who}: the consumer becomes a reader only when the event is handed to it (docs/PULL.md, "Large events"); a 404 after a receive means the payload ledger (idempotency table) was not written.`;
      }
      return 'this route does not exist here: KOERIER_URL points at another API or an older Koerier than this CLI.';
    case 409:
      if (slug === 'idempotency-key-in-progress') {
        return 'the first request with this key still holds its lock on another container: koerier:idempotencyLockSeconds bounds the wait; a lasting 409 means the ingest did not finish its first attempt (its log group).';
      }
      return 'the gateway found a conflict with its stored state; the problem detail says which.';
    case 413:
      return 'a body this size is refused: koerier:maxEventBytes below 1 MiB, or a proxy or WAF rule in front of the API limiting bodies.';
    case 429:
      return tooMany(slug);
    case 500:
      return `${situationCause(situation)}${FUNCTION_LOGS}`;
    case 502:
    case 503:
    case 504:
      if (slug === 'events-not-stored') {
        return 'the ingest could not write to the inbound SQS queue: its sqs:SendMessage grant, a deleted queue, or an SQS outage (the queues use SQS-managed encryption, no KMS key).';
      }
      if (!slug) {
        return (
          'the function did not answer: it crashed at start (a missing or invalid setting in its environment), ran past its timeout, or was ' +
          "throttled (koerier:ingestReservedConcurrency, koerier:pullReservedConcurrency, the account's concurrent executions quota); its log group says which."
        );
      }
      return `${situationCause(situation)}a dependency refused or timed out (DynamoDB, SQS, S3 or KMS throttling, or a quota); ${FUNCTION_LOGS}`;
    default:
      return answer.status >= 200 && answer.status < 300
        ? 'the gateway answered, but not as Koerier answers this request: is KOERIER_URL a Koerier?'
        : 'an answer Koerier does not give to this request: something in front of the API (a proxy, WAF, CloudFront) or another service at KOERIER_URL.';
  }
}

function forbidden(slug: string | undefined, who: string, challenge: string, situation: Situation): string {
  if (slug === undefined) {
    return "refused before Koerier answered: an AWS WAF rule (koerier:edgeProtection) or a resource policy; the web ACL's sampled requests show which.";
  }
  if (slug === 'forbidden') {
    const scope = /scope="([^"]*)"/.exec(challenge)?.[1] ?? neededScope(situation.kind);
    return (
      `${who}'s token lacks the scope ${scope}: give the client that scope at the identity provider (Keycloak: a client scope; ` +
      'Entra ID: an app role, admin consent) and check that koerier:scopeClaims names the claim it arrives in.'
    );
  }
  if (slug === 'source-not-granted') {
    return (
      `${who} has no publish grant covering ${situation.source ?? 'this source'}: add one to the partner (PUT /clients/${who} "publishGrants", ` +
      'docs/OPERATIONS.md, "Partners at run time"; in effect within KOERIER_PARTNERS_REFRESH_SECONDS, 30 s), or give --source a prefix it is granted.'
    );
  }
  if (slug === 'subscription-not-entitled') {
    return (
      `${who} is not entitled to ${situation.type ?? 'the test type'}: add {"typePrefix": "${typePrefixOf(situation.type)}"} to the partner's ` +
      `"entitlements" (PUT /clients/${who}; seeded from koerier:entitlements).`
    );
  }
  if (slug === 'type-reserved')
    return "the type is in Koerier's own namespace (dev.koerier.): give --type another one.";
  if (slug === 'edge-bypassed')
    return "KOERIER_URL goes around the CloudFront distribution (koerier:edgeProtection cloudfront-waf): use the stack's ApiUrl.";
  return `refused (${slug}); the problem detail says why.`;
}

function tooMany(slug: string | undefined): string {
  if (slug === 'rate-limited') {
    return "the client's rate limit: koerier:publishRatePerMinute (POST /events) or koerier:manageRatePerMinute (subscriptions, pull, administration).";
  }
  if (slug === 'too-many-polls')
    return 'the client has as many long polls open as KOERIER_PULL_MAX_POLLS_PER_CLIENT allows: another consumer of the same client.';
  return "throttled before Koerier: API Gateway's koerier:routeThrottling or the account's API Gateway quota, or an AWS WAF rate rule (koerier:edgeRateLimits).";
}

/** What each step's function does that a 5xx may come from, to lead the meaning. */
const CAUSES: Record<StepKind, string> = {
  description: '',
  health: '',
  token: '',
  unauthenticated: '',
  publish: '',
  idempotency: 'the ingest reads and writes the idempotency table; ',
  'broken-event': '',
  'publish-large':
    'the claim check writes the data to the payloads bucket under its own KMS key (the ingest needs s3:PutObject and kms:GenerateDataKey); ',
  subscribe:
    'the subscriptions function creates the pull queues (sqs:CreateQueue on <stack>-pull-*) and stores the subscription; ',
  receive:
    'the pull function reads the subscription, receives from its SQS queue and seals lock tokens with the lock-token KMS key; ',
  payload: 'the payloads function reads the object from the payloads bucket (s3:GetObject, kms:Decrypt on its key); ',
  acknowledge:
    'the pull function opens the lock tokens with the lock-token KMS key (kms:Decrypt) and deletes from the SQS queue; ',
  cleanup: 'the subscriptions function deletes the pull queues (sqs:DeleteQueue) after the record; ',
};

function situationCause(situation: Situation): string {
  return CAUSES[situation.kind];
}

/** The scope a step's calls need. */
const SCOPES: Record<StepKind, string> = {
  description: 'events:publish',
  health: 'events:publish',
  token: 'events:publish',
  unauthenticated: 'events:publish',
  publish: 'events:publish',
  'publish-large': 'events:publish',
  idempotency: 'events:publish',
  'broken-event': 'events:publish',
  subscribe: 'subscriptions:manage',
  cleanup: 'subscriptions:manage',
  receive: 'events:consume',
  payload: 'events:consume',
  acknowledge: 'events:consume',
};

export function neededScope(kind: StepKind): string {
  return SCOPES[kind];
}

/** The entitlement prefix to advise for a type: everything up to and including its last dot. */
export function typePrefixOf(type: string | undefined): string {
  if (!type) return 'nl.koerier.doctor.';
  const dot = type.lastIndexOf('.');
  return dot > 0 ? type.slice(0, dot + 1) : type;
}

/** What a failure to get a token usually means: the OAuth2 error the token endpoint gave, or why it could not be asked. */
export function meaningOfTokenFailure(message: string, clientId: string): string {
  if (/invalid_client|unauthorized_client/.test(message)) {
    return (
      `the identity provider does not accept ${clientId} with this secret for client credentials: a wrong client id or secret, ` +
      'or a client that may not use the grant (Keycloak: "Service accounts roles" off; Entra ID: no secret or certificate).'
    );
  }
  if (/invalid_scope/.test(message)) {
    return `${clientId} may not have the scopes asked for (--scope, KOERIER_SCOPE); Entra ID wants scope api://<koerier>/.default.`;
  }
  if (/cannot reach|ENOTFOUND|ECONNREFUSED|ETIMEDOUT|certificate/i.test(message)) {
    return 'the token URL is wrong or unreachable from here: koerier:tokenUrl (published in /openapi.json), --token-url, a proxy or the network.';
  }
  if (/no valid token|no secret|no client/.test(message)) {
    return 'no credentials to ask with: koerier login, KOERIER_CLIENT_ID with KOERIER_CLIENT_SECRET, or --client-secret-file (for the consumer the --consumer-* options).';
  }
  if (/token URL/.test(message))
    return 'the token URL cannot be found: the API description names none, or cannot be read; give --token-url.';
  return 'the identity provider refused the request; its error says why (docs/DEPLOYING.md, "Identity provider").';
}

/** What a network failure usually means. */
export function meaningOfUnreachable(): string {
  return 'nothing answers at KOERIER_URL from here: a wrong URL (the stack output ApiUrl), DNS, a proxy (HTTPS_PROXY), or a stack that is gone.';
}
