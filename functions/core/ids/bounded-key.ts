/**
 * DynamoDB keys built from what callers send (an event's `source` and `id`, a client id from a
 * token, an Idempotency-Key) must fit DynamoDB's key limits whatever the input, or the write is
 * refused and the request or event that carried it can never be settled (issue 8, item 1).
 *
 * A key stays readable while it fits: `namespace#part#part…`, each part URI-encoded so no
 * separator can be forged. Past `maxBytes` it becomes `namespace#sha256=<base64url of the
 * SHA-256 of the readable text>` (43 characters). The two forms never meet: a URI-encoded part
 * never holds `=`, so no readable key looks like a hashed one, and two different readable texts
 * hash alike only if SHA-256 collides.
 */
import { createHash } from 'node:crypto';

/** DynamoDB's limits, in UTF-8 bytes (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html). */
export const DYNAMODB_LIMITS = {
  partitionKeyBytes: 2048,
  sortKeyBytes: 1024,
  itemBytes: 400 * 1024,
} as const;

/** What follows the namespace in a hashed key, then 43 characters of base64url. */
export const HASHED_KEY_MARKER = 'sha256=';
/** A namespace is a short fixed word; anything longer is not kept in the hashed form. */
const MAX_NAMESPACE_LENGTH = 32;

/**
 * The key for `parts` under `namespace`, at most `maxBytes` long (and never longer than the
 * hashed form). `namespace` is a fixed word of the caller's, without `#` or `=`.
 */
export function boundedKey(namespace: string, parts: readonly string[], maxBytes: number): string {
  return boundReadableKey([namespace, ...parts.map(encodeURIComponent)].join('#'), maxBytes);
}

/**
 * The same bound for a readable key built elsewhere, which must have the shape `boundedKey`
 * builds (`namespace#` then URI-encoded parts joined by `#`), so the two forms cannot collide.
 */
export function boundReadableKey(readable: string, maxBytes: number): string {
  // URI-encoded text is ASCII: its length is its size in bytes.
  if (Buffer.byteLength(readable) <= maxBytes) return readable;
  const separator = readable.indexOf('#');
  const namespace = separator > 0 && separator <= MAX_NAMESPACE_LENGTH ? readable.slice(0, separator) : 'key';
  return `${namespace}#${HASHED_KEY_MARKER}${createHash('sha256').update(readable).digest('base64url')}`;
}
