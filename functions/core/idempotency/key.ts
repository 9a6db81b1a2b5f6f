/** Reading the Idempotency-Key request header (EDU-IDEM-6, EDU-IDEM-18). */
import { KoerierError, problems } from '../http/problems.js';
import type { ProblemSlug } from '../http/problem-titles.js';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** RFC 4122 / RFC 9562 version 4: version nibble 4, variant bits 10xx. */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * EDU-IDEM-6/18: the key must be a canonical UUIDv4, in either case. The IETF draft the profile
 * builds on defines the field as a Structured Field String (`"…"`), so the quoted form is accepted
 * next to the bare one. Returns the key lower-cased; throws the 400 saying what is wrong.
 */
export function readIdempotencyKey(headers: Readonly<Record<string, string>>): string {
  const raw = headers[IDEMPOTENCY_KEY_HEADER]?.trim() ?? '';
  if (raw === '') {
    throw keyProblem(
      'idempotency-key-missing',
      'missing',
      'EDU-IDEM-18',
      'This operation requires an Idempotency-Key header holding a UUIDv4.',
    );
  }
  const value = raw.length > 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (!UUID.test(value)) {
    throw keyProblem(
      'idempotency-key-malformed',
      'uuid',
      'EDU-IDEM-6',
      'The Idempotency-Key is not a UUID (expected 8-4-4-4-12 hexadecimal digits).',
    );
  }
  if (!UUID_V4.test(value)) {
    throw keyProblem(
      'idempotency-key-malformed',
      'uuid-v4',
      'EDU-IDEM-6',
      'The Idempotency-Key is a UUID but not version 4 (random).',
    );
  }
  return value.toLowerCase();
}

function keyProblem(slug: ProblemSlug, rule: string, requirement: string, message: string): KoerierError {
  return new KoerierError(
    problems.badRequest(slug, message, [{ attribute: 'Idempotency-Key', rule, requirement, message }]),
  );
}
