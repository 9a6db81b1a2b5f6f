/**
 * Sink credentials (EDU-14, WH-3): what Koerier presents to a subscriber's webhook — a static
 * bearer token, or OAuth 2.0 client credentials it exchanges for tokens itself. They are
 * write-only: encrypted before they are stored (`CredentialCipher`, bound to the subscription),
 * never returned by the API, never logged.
 *
 * API shape (`sinkcredential`, after the CloudEvents Subscriptions API's `credentialtype`):
 *   { "credentialtype": "ACCESSTOKEN", "accesstoken": "<token>" }
 *   { "credentialtype": "CLIENTCREDENTIALS", "tokenurl": "https://…", "clientid": "…",
 *     "clientsecret": "…", "scope": "…"?, "audience": "…"? }
 */
import type { ValidationIssue } from '../http/problems.js';
import { outboundUrlProblem, type OutboundUrlRules } from '../subscriptions/outbound-url.js';
import type { SinkCredentialKind, StoredSinkCredential } from '../subscriptions/subscription.js';

export type SinkCredential =
  | { readonly kind: 'bearer'; readonly token: string }
  | {
      readonly kind: 'oauth2-client-credentials';
      readonly tokenUrl: string;
      readonly clientId: string;
      readonly clientSecret: string;
      readonly scope?: string;
      readonly audience?: string;
    };

/** Symmetric encryption bound to a context: a ciphertext only decrypts with the same context. */
export interface CredentialCipher {
  encrypt(plaintext: string, context: Readonly<Record<string, string>>): Promise<string>;
  decrypt(ciphertext: string, context: Readonly<Record<string, string>>): Promise<string>;
}

/** The API's name for each kind, the only part of a credential the API ever shows. */
export const CREDENTIAL_TYPE_NAMES: Readonly<Record<SinkCredentialKind, string>> = {
  bearer: 'ACCESSTOKEN',
  'oauth2-client-credentials': 'CLIENTCREDENTIALS',
};

/** Binding to the subscription: a ciphertext copied to another subscription does not decrypt. */
function encryptionContext(subscriptionId: string): Record<string, string> {
  return { purpose: 'koerier-sink-credential', subscription: subscriptionId };
}

export async function sealSinkCredential(credential: SinkCredential, subscriptionId: string, cipher: CredentialCipher): Promise<StoredSinkCredential> {
  return { kind: credential.kind, ciphertext: await cipher.encrypt(JSON.stringify(credential), encryptionContext(subscriptionId)) };
}

/** For the delivery function: the credential to present to the subscription's sink. */
export async function openSinkCredential(stored: StoredSinkCredential, subscriptionId: string, cipher: CredentialCipher): Promise<SinkCredential> {
  return JSON.parse(await cipher.decrypt(stored.ciphertext, encryptionContext(subscriptionId))) as SinkCredential;
}

const MAX_SECRET_LENGTH = 4096;
/** RFC 6750 b64token: what may follow `Bearer ` in an Authorization header. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Which kinds of sink credential a deployment accepts (WH-3, EDU-4, EDU-14). `oauth2-only`, the
 * default and what the Edukoppeling profile asks (its section 3: OAuth 2.0 client credentials
 * towards every party), refuses static bearer tokens; `bearer-or-oauth2` takes both (NL GOV
 * deployments whose subscribers hand out long-lived tokens).
 */
export type SinkCredentialPolicy = 'oauth2-only' | 'bearer-or-oauth2';
export const SINK_CREDENTIAL_POLICIES: readonly SinkCredentialPolicy[] = ['oauth2-only', 'bearer-or-oauth2'];

/**
 * Why a stored subscription may not be delivered to as it is (a record from before credentials
 * were required, or a bearer token where only OAuth2 is allowed); undefined when it may. In the
 * subscriber's words: it becomes the status reason of the suspension.
 */
export function credentialShortfall(credential: Pick<StoredSinkCredential, 'kind'> | undefined, policy: SinkCredentialPolicy): string | undefined {
  if (credential === undefined) return 'the subscription has no sink credential, and every delivery must carry one (WH-3); set sinkcredential with PATCH to reactivate it';
  if (credential.kind === 'bearer' && policy === 'oauth2-only') {
    return 'this deployment accepts only OAuth2 client credentials towards targets, not a static access token (EDU-4); set a CLIENTCREDENTIALS sinkcredential with PATCH to reactivate it';
  }
  return undefined;
}

/** The token URL follows the sink's rules (https, allowed ports, plain http to loopback on the laptop). */
export function parseSinkCredential(
  value: unknown,
  rules: OutboundUrlRules & { readonly policy: SinkCredentialPolicy },
  path = 'sinkcredential',
): { credential?: SinkCredential; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const fail = (attribute: string, rule: string, message: string) => {
    issues.push({ attribute, rule, requirement: 'EDU-14', message });
    return { issues };
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(path, 'object', 'sinkcredential must be an object');
  const fields = value as Record<string, unknown>;
  const text = (name: string, required: boolean): string | undefined => {
    const member = fields[name];
    if (member === undefined && !required) return undefined;
    if (typeof member !== 'string' || member.length === 0 || member.length > MAX_SECRET_LENGTH) {
      issues.push({ attribute: `${path}.${name}`, rule: 'non-empty-string', requirement: 'EDU-14', message: `${name} must be a non-empty string of at most ${MAX_SECRET_LENGTH} characters` });
      return undefined;
    }
    return member;
  };
  const allowOnly = (allowed: readonly string[]) => {
    for (const name of Object.keys(fields)) {
      if (!allowed.includes(name)) issues.push({ attribute: `${path}.${name}`, rule: 'unknown-member', requirement: 'EDU-14', message: `unknown member "${name}"` });
    }
  };

  switch (fields['credentialtype']) {
    case 'ACCESSTOKEN': {
      if (rules.policy === 'oauth2-only') {
        return fail(`${path}.credentialtype`, 'oauth2-only', 'this deployment accepts only OAuth2 client credentials towards targets: credentialtype must be CLIENTCREDENTIALS (EDU-4)');
      }
      allowOnly(['credentialtype', 'accesstoken']);
      const token = text('accesstoken', true);
      if (token !== undefined && !B64TOKEN.test(token)) {
        return fail(`${path}.accesstoken`, 'b64token', 'the access token must be usable as a Bearer token (RFC 6750 b64token characters)');
      }
      return issues.length > 0 || token === undefined ? { issues } : { credential: { kind: 'bearer', token }, issues };
    }
    case 'CLIENTCREDENTIALS': {
      allowOnly(['credentialtype', 'tokenurl', 'clientid', 'clientsecret', 'scope', 'audience']);
      const tokenUrl = text('tokenurl', true);
      const clientId = text('clientid', true);
      const clientSecret = text('clientsecret', true);
      const scope = text('scope', false);
      const audience = text('audience', false);
      const urlProblem = tokenUrl === undefined ? undefined : outboundUrlProblem(tokenUrl, 'tokenurl', rules);
      if (urlProblem) issues.push({ attribute: `${path}.tokenurl`, ...urlProblem });
      if (issues.length > 0 || tokenUrl === undefined || clientId === undefined || clientSecret === undefined) return { issues };
      return {
        credential: {
          kind: 'oauth2-client-credentials',
          tokenUrl,
          clientId,
          clientSecret,
          ...(scope === undefined ? {} : { scope }),
          ...(audience === undefined ? {} : { audience }),
        },
        issues,
      };
    }
    default:
      return fail(`${path}.credentialtype`, 'enum', rules.policy === 'oauth2-only' ? 'credentialtype must be CLIENTCREDENTIALS' : 'credentialtype must be ACCESSTOKEN or CLIENTCREDENTIALS');
  }
}
