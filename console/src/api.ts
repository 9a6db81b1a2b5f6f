/**
 * Koerier's API as the signed-in user: the one generated client (client/koerier-client.ts) with the
 * user's own token. Its middleware gives each state-changing call an Idempotency-Key like every other
 * client's (EDU-IDEM), retries 429 and 503 after Retry-After, and throws refusals as a KoerierProblem.
 */
import { createKoerierClient, type KoerierClient } from '../../client/koerier-client.js';
import type { ConsoleConfig, Session } from './auth.js';

export { KoerierProblem as ApiError } from '../../client/koerier-client.js';
export type Api = KoerierClient;

/** A person waits on the page: a short bound on how long a retry may wait. */
const MAX_RETRY_AFTER_MS = 10_000;

export function apiFor(config: ConsoleConfig, session: Session): Api {
  return createKoerierClient({
    baseUrl: config.apiUrl,
    token: session.accessToken,
    retries: 2,
    maxRetryAfterMs: MAX_RETRY_AFTER_MS,
    headers: { accept: 'application/json' },
  });
}
