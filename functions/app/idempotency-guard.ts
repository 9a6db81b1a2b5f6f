/** The Idempotency-Key guard (EDU-IDEM-3) as the management apps call it: per client and operation, with the configured TTL and lock. */
import type { HttpRequest, HttpResponse } from '../core/http/messages.js';
import { withIdempotency } from '../core/idempotency/index.js';
import type { KoerierDependencies } from './dependencies.js';
import { describeError } from './logger.js';

export type Guarded = (
  clientId: string,
  operation: string,
  process: () => Promise<HttpResponse>,
) => Promise<HttpResponse>;

export function idempotencyGuard(
  deps: Pick<KoerierDependencies, 'config' | 'log' | 'idempotency'>,
  request: HttpRequest,
  options: { replayHeaders?: readonly string[] } = {},
): Guarded {
  const { config, log } = deps;
  return (clientId, operation, process) =>
    withIdempotency(
      request,
      {
        clientId,
        operation,
        store: deps.idempotency,
        ttlSeconds: config.idempotency.ttlSeconds,
        lockSeconds: config.idempotency.lockSeconds,
        replayHeaders: options.replayHeaders,
        onStoreError: (error) =>
          log.warn('idempotency completion not stored', { client: clientId, operation, error: describeError(error) }),
      },
      process,
    );
}
