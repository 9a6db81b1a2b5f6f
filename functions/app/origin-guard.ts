/**
 * With edge protection on (CDK context `koerier:edgeProtection`), CloudFront adds a secret header
 * to every request it forwards, and the functions get its value in KOERIER_ORIGIN_VERIFY_SECRET.
 * An HTTP API cannot carry an AWS WAF web ACL itself, and its execute-api address stays public,
 * so this check is what keeps callers from going around CloudFront and its WAF rules: a request
 * without the header is refused before it is parsed, authenticated or routed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { HttpRequest } from '../core/http/messages.js';
import { KoerierError, problem } from '../core/http/problems.js';

/** Lower case, as HttpRequest headers are. */
export const ORIGIN_VERIFY_HEADER = 'x-koerier-origin-verify';

/** Throws a 403 problem unless the request carries the expected header value (or none is expected). */
export function requireEdgeOrigin(request: HttpRequest, expectedSecret: string | undefined): void {
  if (expectedSecret === undefined) return;
  const presented = request.headers[ORIGIN_VERIFY_HEADER] ?? '';
  // Hashes have equal lengths, so the comparison takes the same time whatever was presented.
  if (timingSafeEqual(sha256(presented), sha256(expectedSecret))) return;
  throw new KoerierError(
    problem(403, 'edge-bypassed', 'Call Koerier through its public address, not the API Gateway endpoint.'),
  );
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
