/**
 * The ZGW adapter's ports (functions/core/zgw/ports.ts, zgw-tokens.ts) on Koerier's own
 * dependencies (issue 34): ZGW clients from the partner directory, an abonnement's `auth` sealed by
 * the credential cipher, the callback probe through the guarded outbound HTTP client, and the
 * ingest use case for the CloudEvents notificaties become.
 */
import { scopes } from '../core/auth/access-tokens.js';
import { acceptEvents, type IngestDependencies } from '../core/ingest/index.js';
import { KoerierError, type Problem } from '../core/http/problems.js';
import type { HttpRequest, HttpResponse } from '../core/http/messages.js';
import type { CredentialCipher } from '../core/credentials/sink-credential.js';
import type { PartnerDirectory } from '../core/partners/partner-directory.js';
import { zgwSecretContext } from '../core/partners/partner.js';
import { zgwRefusal } from '../core/zgw/zgw-problems.js';
import type { ClientAdmission } from './client-throttling.js';
import { zgwScopes, type ZgwClientRecord, type ZgwClients, type ZgwScope } from '../core/zgw/zgw-tokens.js';
import type { AuthSealer, CallbackProbe } from '../core/zgw/ports.js';
import type { SafeHttpClient } from '../net/safe-http-client.js';
import { OutboundRequestError } from '../net/outbound-errors.js';

/**
 * A partner with a ZGW secret is a ZGW client; its scopes follow from what it holds in Koerier:
 * publish grants give `notificaties.publiceren` (and the first grant is its source), entitlements
 * give `notificaties.consumeren`. Opened secrets are kept per ciphertext for the container's life.
 */
export function partnerZgwClients(partners: PartnerDirectory, cipher: CredentialCipher): ZgwClients {
  const opened = new Map<string, Promise<string>>();
  return {
    async find(clientId) {
      const snapshot = await partners.current();
      const sealed = snapshot.zgwSecrets?.get(clientId);
      if (sealed === undefined) return undefined;
      let secret = opened.get(sealed);
      if (secret === undefined) {
        secret = cipher.decrypt(sealed, zgwSecretContext(clientId));
        secret.catch(() => opened.delete(sealed));
        opened.set(sealed, secret);
      }
      const grants = snapshot.publishGrants[clientId] ?? [];
      const entitled = (snapshot.entitlements.get(clientId) ?? []).length > 0;
      const held: ZgwScope[] = [
        ...(grants.length > 0 ? [zgwScopes.publiceren] : []),
        ...(entitled ? [zgwScopes.consumeren] : []),
      ];
      const record: ZgwClientRecord = {
        secret: await secret,
        scopes: new Set(held),
        ...(grants[0] ? { source: grants[0] } : {}),
      };
      return record;
    },
  };
}

/** Binding to the abonnement: a sealed `auth` copied to another abonnement does not open. */
const authContext = (uuid: string) => ({ purpose: 'koerier-zgw-abonnement-auth', abonnement: uuid });

export function cipherAuthSealer(cipher: CredentialCipher): AuthSealer {
  return {
    seal: (auth, uuid) => cipher.encrypt(auth, authContext(uuid)),
    open: (sealed, uuid) => cipher.decrypt(sealed, authContext(uuid)),
  };
}

/** Open Notificaties' checks post with `requests`, JSON; an unreachable callback is no answer (0). */
export function outboundCallbackProbe(http: SafeHttpClient): CallbackProbe {
  return async (url, body, authorization) => {
    try {
      const answer = await http.request({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify(body),
      });
      return answer.status;
    } catch (error) {
      if (error instanceof OutboundRequestError) return 0;
      throw error;
    }
  };
}

/**
 * Hands one CloudEvent to the ingest use case as a publish request of `publisher` would, with the
 * given Idempotency-Key: the same guard, grants, claim check, queue and 202. Its refusals come
 * back as the ZGW `Fout` of the same status, the ingest's problem type as `code`.
 */
export async function ingestCloudEvent(
  event: object,
  idempotencyKey: string,
  publisher: string,
  deps: IngestDependencies,
  correlationId: string,
): Promise<void> {
  const request: HttpRequest = {
    method: 'POST',
    path: '/v1/events',
    headers: {
      'content-type': 'application/cloudevents+json',
      'idempotency-key': idempotencyKey,
      'x-correlation-id': correlationId,
    },
    query: {},
    routeKey: 'POST /events',
    pathParameters: {},
    body: Buffer.from(JSON.stringify(event)),
  };
  let answer: HttpResponse;
  try {
    answer = await acceptEvents(request, { clientId: publisher, scopes: new Set([scopes.publish]) }, deps);
  } catch (error) {
    throw asZgwRefusal(error);
  }
  // The ingest answers its refusals (the idempotency guard stores them for replays) rather than
  // throwing them: a 4xx or 5xx here was taken for an acceptance, and the notificatie got a 201
  // while nothing was queued.
  if (answer.status >= 400) {
    const retryAfter = answer.headers['retry-after'];
    const headers = retryAfter === undefined ? {} : { 'retry-after': retryAfter };
    throw asZgwRefusal(new KoerierError(JSON.parse(answer.body) as Problem, { headers }));
  }
}

/**
 * The per-client throttle of Koerier's other APIs (client-throttling.ts) on the ZGW routes, right
 * after the token check and before any store is read: a notificatie or CloudEvent takes from the
 * client's publish bucket (shared with POST /v1/events), every other operation from its manage
 * bucket. Its 429 is the ZGW `Fout` (code `rate-limited`), with `Retry-After`.
 */
export function admitZgwClient(admission: Pick<ClientAdmission, 'admit'>, clientId: string, publishes: boolean): void {
  try {
    admission.admit(clientId, publishes ? scopes.publish : scopes.manageSubscriptions);
  } catch (error) {
    throw asZgwRefusal(error);
  }
}

/** A refusal of Koerier's own as the ZGW `Fout` of the same status, its problem type as `code`; anything else as it is. */
function asZgwRefusal(error: unknown): unknown {
  if (!(error instanceof KoerierError)) return error;
  const { problem } = error;
  const code = problem.type.slice(problem.type.lastIndexOf('/') + 1);
  const params = (problem.errors ?? []).map((issue) => ({
    name: issue.attribute ?? 'nonFieldErrors',
    code: issue.rule,
    reason: issue.message,
  }));
  return zgwRefusal(
    problem.status,
    code,
    problem.detail ?? problem.title,
    problem.status === 400 ? params : undefined,
    error.headers,
  );
}
