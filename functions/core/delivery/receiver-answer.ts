/**
 * What a receiver answered to one delivery attempt, as its attempt record keeps it (issue 30 item 2):
 * the first 2 KB of its body and the few headers that explain an outcome, so a subscriber can see
 * *why* its receiver refused without asking an operator.
 *
 * Kept: `Content-Type`, `Retry-After` and the `WebHook-*` headers of the webhook spec. Never any
 * other header: `Set-Cookie`, `Location` with a token, `WWW-Authenticate` or a server banner say
 * things about the receiver's infrastructure that need not rest in Koerier, and cost storage on
 * every attempt. The excerpt is retained, shown and erased as its attempt record is.
 */

/** Bytes of the answer body an attempt keeps. */
export const ANSWER_EXCERPT_BYTES = 2048;

/** A kept header value is cut here: a header can be 8 KB and is no explanation past this. */
export const ANSWER_HEADER_CHARACTERS = 256;

/** At most this many `WebHook-*` headers are kept (the spec defines four). */
const MAX_WEBHOOK_HEADERS = 8;

export interface ReceiverAnswer {
  /** The first `ANSWER_EXCERPT_BYTES` of the body, as UTF-8 text ('' for an empty body). */
  readonly body: string;
  /** The body was longer than the excerpt. */
  readonly truncated?: true;
  /** The answer's `Content-Type`, when it sent one. */
  readonly contentType?: string;
  /** `Retry-After` and `WebHook-*`, lower-case names. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The part of an answer an attempt keeps. `headers` have lower-case names (as Node gives them);
 * `body` is the whole body as read, or nothing when it was not read (too large).
 */
export function receiverAnswerOf(
  headers: Readonly<Record<string, string>>,
  body: Uint8Array | undefined,
): ReceiverAnswer {
  const kept: Record<string, string> = {};
  let webhookHeaders = 0;
  for (const [name, value] of Object.entries(headers)) {
    const isWebhook = name.startsWith('webhook-');
    if (name !== 'retry-after' && !(isWebhook && webhookHeaders < MAX_WEBHOOK_HEADERS)) continue;
    if (isWebhook) webhookHeaders += 1;
    kept[name] = value.slice(0, ANSWER_HEADER_CHARACTERS);
  }
  const contentType = headers['content-type']?.slice(0, ANSWER_HEADER_CHARACTERS);
  const { text, truncated } = bodyExcerpt(body);
  return {
    body: text,
    ...(truncated ? { truncated: true as const } : {}),
    ...(contentType ? { contentType } : {}),
    ...(Object.keys(kept).length > 0 ? { headers: kept } : {}),
  };
}

/**
 * The first `ANSWER_EXCERPT_BYTES` as text, never ending in a cut UTF-8 sequence (the cut would
 * read as a replacement character the receiver never sent). A body that was not read at all is
 * an empty, truncated excerpt.
 */
function bodyExcerpt(body: Uint8Array | undefined): { text: string; truncated: boolean } {
  if (body === undefined) return { text: '', truncated: true };
  if (body.length <= ANSWER_EXCERPT_BYTES) return { text: decoder.decode(body), truncated: false };
  let end = ANSWER_EXCERPT_BYTES;
  // Step back over continuation bytes (10xxxxxx) to the start of the character that was cut.
  while (end > 0 && ((body[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return { text: decoder.decode(body.subarray(0, end)), truncated: true };
}

const decoder = new TextDecoder('utf-8');
