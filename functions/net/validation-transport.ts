/**
 * The outbound half of the validation handshake (WH-4): the OPTIONS request sent through the
 * SSRF-guarded client. A network failure becomes an outcome the handshake can judge, never an
 * error: the subscriber reads the merged, fixed wording (review items 18, 19), while the precise
 * kind and the network's own message go only to the operator log.
 */
import { silentLog, type Log } from '../core/ports/log.js';
import { SUBSCRIBER_FAILURE } from '../core/delivery/attempt-outcome.js';
import type { ValidationTransport } from '../core/webhooks/validation-handshake.js';
import { OutboundRequestError, type SafeHttpClient } from './safe-http-client.js';

export function validationTransport(client: SafeHttpClient, log: Log = silentLog): ValidationTransport {
  return async ({ url, headers }) => {
    try {
      const response = await client.request({ method: 'OPTIONS', url, headers });
      return { status: response.status, headers: response.headers };
    } catch (error) {
      if (!(error instanceof OutboundRequestError)) throw error;
      log.info('validation request failed', { sinkOrigin: originOf(url), failure: error.kind, error: error.message });
      return {
        failure: SUBSCRIBER_FAILURE[error.kind].detail,
        permanent: error.kind === 'refused-address' || error.kind === 'invalid-url' || error.kind === 'not-sendable',
      };
    }
  };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}
