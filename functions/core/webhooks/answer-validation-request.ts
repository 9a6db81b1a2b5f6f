/**
 * The gateway's own ingest is a webhook target too (WH-7): it answers the abuse-protection
 * validation request of the CloudEvents webhook spec (section 4) so a sender can check consent
 * before it delivers.
 */
import { emptyResponse, type HttpResponse } from '../http/messages.js';
import { KoerierError, problem } from '../http/problems.js';

export interface ValidationPolicy {
  /** Origins allowed to deliver; `*` allows any. */
  readonly allowedOrigins: readonly string[];
  /** Requests per minute each sender may make (`WebHook-Allowed-Rate`). */
  readonly ratePerMinute: number;
}

/**
 * An OPTIONS request with `WebHook-Request-Origin` gets consent (200 with the allowed origin and
 * rate) or a refusal (a thrown 403). We answer synchronously, which the spec allows even when a
 * `WebHook-Request-Callback` is offered. A plain OPTIONS is answered with the allowed methods.
 */
export function answerValidationRequest(
  headers: Readonly<Record<string, string>>,
  policy: ValidationPolicy,
  allowedMethods: readonly string[],
): HttpResponse {
  const allow = allowedMethods.join(', ');
  const origin = headers['webhook-request-origin']?.trim();
  if (!origin) return emptyResponse(204, { allow });
  const permitted =
    policy.allowedOrigins.includes('*') || policy.allowedOrigins.some((o) => o.toLowerCase() === origin.toLowerCase());
  if (!permitted) {
    throw new KoerierError(
      problem(403, 'origin-not-allowed', `Koerier does not accept deliveries from origin "${origin}".`),
      {
        headers: { allow },
      },
    );
  }
  return emptyResponse(200, {
    allow,
    'webhook-allowed-origin': origin,
    'webhook-allowed-rate': String(policy.ratePerMinute),
  });
}
