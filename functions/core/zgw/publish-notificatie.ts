/**
 * POST /notificaties (issue 34): validated as Open Notificaties validates it — the body's shape,
 * the kanaal exists (400 `message_kanaal` on `kanaal`), the kenmerken consistent with the kanaal's
 * filters (400 `kenmerken_inconsistent` on `kenmerken`) — then made a CloudEvent
 * (./notificatie-mapping.ts) and handed to Koerier's own ingest, which keeps it (idempotency,
 * archive, routing, replays, dead letters) as any published event. Answers 201 with the
 * notificatie, as Open Notificaties does.
 */
import { jsonResponse, type HttpResponse } from '../http/messages.js';
import { MESSAGE_BODY, type Notificatie } from './zgw-bodies.js';
import { invalidInput, readZgwBody, zgwRefusal } from './zgw-problems.js';
import { consistentWithKanaal } from './zgw-filters.js';
import { notificatieAsCloudEvent, notificatieIdempotencyKey } from './notificatie-mapping.js';
import type { ZgwIngest, ZgwStore } from './ports.js';
import type { ZgwPrincipal } from './zgw-tokens.js';

export interface PublishContext {
  readonly store: Pick<ZgwStore, 'kanaalNamed'>;
  readonly ingest: ZgwIngest;
}

export async function publishNotificatie(
  ctx: PublishContext,
  principal: ZgwPrincipal,
  body: Buffer,
): Promise<HttpResponse> {
  const notificatie = readZgwBody<Notificatie>(body, MESSAGE_BODY);
  const kanaal = await ctx.store.kanaalNamed(notificatie.kanaal);
  if (kanaal === undefined)
    throw invalidInput([{ name: 'kanaal', code: 'message_kanaal', reason: 'Kanaal met deze naam bestaat niet.' }]);
  if (!consistentWithKanaal(kanaal.filters, Object.keys(notificatie.kenmerken ?? {})))
    throw invalidInput([
      { name: 'kenmerken', code: 'kenmerken_inconsistent', reason: "Kenmerken aren't consistent with kanaal filters" },
    ]);
  const source = principal.client.source;
  // A CloudEvent needs a source, and Koerier takes it from the grants, never from the body.
  if (source === undefined)
    throw zgwRefusal(
      403,
      'permission_denied',
      'Deze client heeft geen geregistreerde bron (publish grant) in Koerier en kan niet publiceren.',
    );
  const event = notificatieAsCloudEvent(notificatie, principal.clientId, source);
  await ctx.ingest(event, notificatieIdempotencyKey(principal.clientId, notificatie), principal.clientId);
  return jsonResponse(201, { ...notificatie, kenmerken: notificatie.kenmerken ?? {} });
}
