/**
 * The receiving side of the CloudEvents webhook validation handshake (WH-4; CloudEvents HTTP 1.1
 * Web Hooks §4): Koerier asks with an OPTIONS request carrying `WebHook-Request-Origin` (its
 * origin name, e.g. `koerier.example.org`), maybe `WebHook-Request-Callback` and
 * `WebHook-Request-Rate`. Consent is a 200 with `WebHook-Allowed-Origin` (that origin) and
 * `WebHook-Allowed-Rate`; anything else leaves the subscription not active:
 *
 * - an origin not in `origins`: 403 (Koerier reads it as refused);
 * - `decide` answering `later`: 200 without `WebHook-Allowed-Origin` (§4.2: consent withheld for now);
 *   the receiver approves afterwards by calling the callback URL (GET), which `decide` is handed;
 * - `handshake: false` (WH-5, validation agreed out of band): 405, as a target without the
 *   handshake answers; the subscription must then be created with `validation: "agreed"`.
 */
import { emptyAnswer, problemAnswer, type ReceiverAnswer } from './messages.js';

export interface ValidationOffer {
  /** `WebHook-Request-Origin`. */
  readonly origin: string;
  /** `WebHook-Request-Callback`: a URL to call (GET) to approve later. */
  readonly callback?: string | undefined;
  /** `WebHook-Request-Rate`: the deliveries per minute Koerier asks to send. */
  readonly requestedRate?: string | undefined;
}

export interface HandshakeOptions {
  /** The origins (`WebHook-Request-Origin` values) that may deliver here, or `['*']` for any. */
  readonly origins: readonly string[];
  /** `WebHook-Allowed-Rate`: deliveries per minute, or `*` for no limit. Absent: none is sent, so Koerier keeps to the rate it asked for (if any). */
  readonly rate?: number | '*';
  /** Say in `Accept-Post` that batches (`application/cloudevents-batch+json`) are welcome (JSON-3, EDU-11). */
  readonly batches?: boolean;
  /** A last word on an allowed origin: consent now (default), refuse, or withhold and approve through the callback later. */
  readonly decide?: (
    offer: ValidationOffer,
  ) => 'consent' | 'refuse' | 'later' | Promise<'consent' | 'refuse' | 'later'>;
}

export const STRUCTURED_MEDIA_TYPE = 'application/cloudevents+json';
export const BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';
const ALLOW = 'POST, OPTIONS';

export async function answerHandshake(
  headers: Readonly<Record<string, string>>,
  options: HandshakeOptions | false,
): Promise<ReceiverAnswer> {
  if (options === false) return emptyAnswer(405, { allow: 'POST' });
  const acceptPost = [STRUCTURED_MEDIA_TYPE, ...(options.batches ? [BATCH_MEDIA_TYPE] : [])].join(', ');
  const origin = headers['webhook-request-origin']?.trim();
  // A plain OPTIONS (no handshake): what this resource takes.
  if (!origin) return emptyAnswer(204, { allow: ALLOW, 'accept-post': acceptPost });
  const allowed =
    options.origins.includes('*') || options.origins.some((name) => name.toLowerCase() === origin.toLowerCase());
  const offer: ValidationOffer = {
    origin,
    callback: headers['webhook-request-callback'],
    requestedRate: headers['webhook-request-rate'],
  };
  const decision = allowed ? ((await options.decide?.(offer)) ?? 'consent') : 'refuse';
  if (decision === 'refuse')
    return problemAnswer(
      403,
      'origin-not-allowed',
      'Origin Not Allowed',
      `deliveries from "${origin}" are not accepted here`,
      {
        allow: ALLOW,
      },
    );
  if (decision === 'later') return emptyAnswer(200, { allow: ALLOW, 'accept-post': acceptPost });
  return emptyAnswer(200, {
    allow: ALLOW,
    'accept-post': acceptPost,
    'webhook-allowed-origin': origin,
    ...(options.rate === undefined ? {} : { 'webhook-allowed-rate': String(options.rate) }),
  });
}
