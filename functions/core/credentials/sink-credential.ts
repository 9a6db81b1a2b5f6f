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
 * Parsing that shape is part of the subscription input (`subscriptions/sink-credential-input.ts`);
 * this module is what a subscription and the delivery function share, and imports neither.
 */

/**
 * `authorization`: a ZGW abonnement's `auth`, sent as the whole `Authorization` header exactly as
 * the consumer gave it (issue 34); only the ZGW adapter stores this kind.
 */
export type SinkCredentialKind = 'bearer' | 'oauth2-client-credentials' | 'authorization';

/** A sink credential as stored: the kind in the clear, the secret parts only encrypted. */
export interface StoredSinkCredential {
  readonly kind: SinkCredentialKind;
  /** `CredentialCipher.encrypt` output of the JSON of the whole `SinkCredential`. */
  readonly ciphertext: string;
}

export type SinkCredential =
  | { readonly kind: 'bearer'; readonly token: string }
  | { readonly kind: 'authorization'; readonly value: string }
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
  authorization: 'ZGWAUTH',
};

/** Binding to the subscription: a ciphertext copied to another subscription does not decrypt. */
function encryptionContext(subscriptionId: string): Record<string, string> {
  return { purpose: 'koerier-sink-credential', subscription: subscriptionId };
}

export async function sealSinkCredential(
  credential: SinkCredential,
  subscriptionId: string,
  cipher: CredentialCipher,
): Promise<StoredSinkCredential> {
  return {
    kind: credential.kind,
    ciphertext: await cipher.encrypt(JSON.stringify(credential), encryptionContext(subscriptionId)),
  };
}

/** For the delivery function: the credential to present to the subscription's sink. */
export async function openSinkCredential(
  stored: StoredSinkCredential,
  subscriptionId: string,
  cipher: CredentialCipher,
): Promise<SinkCredential> {
  return JSON.parse(await cipher.decrypt(stored.ciphertext, encryptionContext(subscriptionId))) as SinkCredential;
}

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
export function credentialShortfall(
  credential: Pick<StoredSinkCredential, 'kind'> | undefined,
  policy: SinkCredentialPolicy,
): string | undefined {
  if (credential === undefined)
    return 'the subscription has no sink credential, and every delivery must carry one (WH-3); set sinkcredential with PATCH to reactivate it';
  if (credential.kind === 'bearer' && policy === 'oauth2-only') {
    return 'this deployment accepts only OAuth2 client credentials towards targets, not a static access token (EDU-4); set a CLIENTCREDENTIALS sinkcredential with PATCH to reactivate it';
  }
  return undefined;
}
