/**
 * POST /cloudevents, Open Notificaties' experimental door for CloudEvents (issue 34): in Koerier a
 * CloudEvent sent there takes the same path as one sent to POST /v1/events — the ingest checks it
 * (NL GOV profile, the client's publish grants) and routes it to CloudEvents and notificatie
 * subscribers alike. Answered 201 with the event, as Open Notificaties answers it. The
 * Idempotency-Key is derived from the publisher, `source` and `id`, so a retry is answered, not repeated.
 */
import { jsonResponse, type HttpResponse } from '../http/messages.js';
import { invalidInput } from './zgw-problems.js';
import { uuidFrom } from './notificatie-mapping.js';
import type { ZgwIngest } from './ports.js';
import type { ZgwPrincipal } from './zgw-tokens.js';

export async function publishCloudEvent(
  ctx: { readonly ingest: ZgwIngest },
  principal: ZgwPrincipal,
  body: Buffer,
): Promise<HttpResponse> {
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidInput([{ name: 'nonFieldErrors', code: 'parse_error', reason: 'De body is geen geldige JSON.' }]);
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event))
    throw invalidInput([{ name: 'nonFieldErrors', code: 'invalid', reason: 'Een CloudEvent is een JSON object.' }]);
  const { source, id } = event as Record<string, unknown>;
  const key = uuidFrom(`cloudevent\n${principal.clientId}\n${String(source)}\n${String(id)}`);
  await ctx.ingest(event, key, principal.clientId);
  return jsonResponse(201, event);
}
