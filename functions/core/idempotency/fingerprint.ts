/** Fingerprints of what a request means (EDU-IDEM-8) and of an outgoing payload (EDU-IDEM-11). */
import { createHash } from 'node:crypto';
import { mediaTypeOf, type HttpRequest } from '../http/messages.js';

/**
 * EDU-IDEM-8: SHA-256 (hex) over everything that makes up the request: method, operation, path,
 * query, Content-Type, body, and in CloudEvents binary mode every `ce-` header (there they carry
 * the event's attributes). In structured and batch mode (`application/cloudevents…`) the `ce-`
 * headers are not part of the event (HTTP-5), so they do not count. Other headers never count.
 * Names are lower case and sorted, so header order and case cannot change the fingerprint.
 */
export function requestFingerprint(req: HttpRequest, operation: string): string {
  // Media types and their usual parameters (charset) are case-insensitive.
  const contentType = req.headers['content-type']?.trim().toLowerCase() ?? '';
  const binaryMode = !mediaTypeOf(contentType).startsWith('application/cloudevents');
  const eventHeaders = binaryMode
    ? Object.entries(req.headers)
        .map(([name, value]) => [name.toLowerCase(), value.trim()] as const)
        .filter(([name]) => name.startsWith('ce-'))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    : [];
  const query = Object.entries(req.query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // A JSON array is self-delimiting, so the body that follows it cannot blur into it.
  const head = JSON.stringify([req.method.toUpperCase(), operation, req.path, query, contentType, eventHeaders]);
  return createHash('sha256').update(head).update('\n').update(req.body).digest('hex');
}
