/**
 * The sending side of the webhook validation handshake (WH-4, WH-5; CloudEvents HTTP 1.1 Web Hooks
 * section 4): before a target gets events, Koerier asks it with an OPTIONS request carrying
 * `WebHook-Request-Origin`, a `WebHook-Request-Callback` URL for asynchronous approval and,
 * when configured, `WebHook-Request-Rate`. The answer is read as the spec says:
 *
 * - `WebHook-Allowed-Origin` equal to our origin or `*`: consent, at `WebHook-Allowed-Rate`
 *   (`*` = no limit; absent = the rate we asked for, if we asked);
 * - another origin in that header: refused;
 * - a 2xx without it: the target withholds consent for now and may approve through the callback
 *   (spec 4.2: "it withholds the response headers");
 * - 405/501 (OPTIONS not handled), other 4xx and 3xx (redirects are not followed): refused;
 * - no answer, a network failure or a 5xx: undecided; the callback stays open.
 *
 * A refusal is not final while the callback window is open: spec 4.1.3 lets an administrator of a
 * target that does not support the handshake approve by calling the callback URL by hand.
 * The target may also declare batch support (JSON-3, EDU-11) with `Accept-Post` naming
 * `application/cloudevents-batch+json`.
 */

export interface ValidationRequest {
  readonly sink: string;
  /** `WebHook-Request-Origin`: the DNS-like name Koerier sends as. */
  readonly origin: string;
  readonly callbackUrl?: string | undefined;
  readonly requestedRatePerMinute?: number | undefined;
}

/** How the OPTIONS request is sent: the safe outbound client in production (SSRF guard). */
export type ValidationTransport = (request: {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}) => Promise<ValidationTransportResult>;

export type ValidationTransportResult =
  | { readonly status: number; readonly headers: Readonly<Record<string, string>> }
  /** `permanent`: Koerier may never call this URL (refused address, not https). */
  | { readonly failure: string; readonly permanent: boolean };

export type ValidationOutcome =
  | {
      readonly verdict: 'consented';
      readonly allowedRatePerMinute?: number;
      readonly batchSupported: boolean;
      readonly reason: string;
    }
  | { readonly verdict: 'refused'; readonly reason: string }
  | { readonly verdict: 'undecided'; readonly reason: string };

export const BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';

export async function requestValidation(
  request: ValidationRequest,
  send: ValidationTransport,
): Promise<ValidationOutcome> {
  const headers: Record<string, string> = { 'webhook-request-origin': request.origin };
  if (request.callbackUrl) headers['webhook-request-callback'] = request.callbackUrl;
  if (request.requestedRatePerMinute !== undefined)
    headers['webhook-request-rate'] = String(request.requestedRatePerMinute);
  const result = await send({ url: request.sink, headers });
  if ('failure' in result) {
    return result.permanent
      ? { verdict: 'refused', reason: `Koerier may not call this sink: ${result.failure}` }
      : { verdict: 'undecided', reason: `the validation request got no answer (${result.failure})` };
  }
  return interpretValidationResponse(result.status, result.headers, request);
}

export function interpretValidationResponse(
  status: number,
  headers: Readonly<Record<string, string>>,
  request: Pick<ValidationRequest, 'origin' | 'requestedRatePerMinute'>,
): ValidationOutcome {
  if (status >= 200 && status < 300) {
    const allowedOrigin = headers['webhook-allowed-origin']?.trim();
    if (allowedOrigin === undefined || allowedOrigin === '') {
      return {
        verdict: 'undecided',
        reason: `the target answered ${status} without WebHook-Allowed-Origin; it may still approve through the callback`,
      };
    }
    if (allowedOrigin !== '*' && allowedOrigin.toLowerCase() !== request.origin.toLowerCase()) {
      return { verdict: 'refused', reason: `the target allows origin "${allowedOrigin}", not "${request.origin}"` };
    }
    const rate = allowedRate(headers['webhook-allowed-rate'], request.requestedRatePerMinute);
    return {
      verdict: 'consented',
      ...(rate === undefined ? {} : { allowedRatePerMinute: rate }),
      batchSupported: acceptsBatches(headers['accept-post']),
      reason: `the target consented${rate === undefined ? '' : ` at ${rate} requests per minute`}`,
    };
  }
  if (status === 405 || status === 501)
    return { verdict: 'refused', reason: `the target does not support the validation handshake (HTTP ${status})` };
  if (status >= 300 && status < 500)
    return { verdict: 'refused', reason: `the target refused the validation request (HTTP ${status})` };
  return { verdict: 'undecided', reason: `the target failed to answer the validation request (HTTP ${status})` };
}

/** `WebHook-Allowed-Rate` as requests per minute; undefined for `*` (no limit). */
export function allowedRate(header: string | undefined, requested: number | undefined): number | undefined {
  const value = header?.trim();
  if (value === '*') return undefined;
  if (value && /^[1-9][0-9]{0,8}$/.test(value)) return Number(value);
  // Absent or malformed: hold the target to what we asked for, if we asked.
  return requested;
}

function acceptsBatches(acceptPost: string | undefined): boolean {
  return (acceptPost ?? '')
    .split(',')
    .map((type) => type.split(';')[0]!.trim().toLowerCase())
    .includes(BATCH_MEDIA_TYPE);
}
