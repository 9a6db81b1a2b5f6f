/**
 * The request bodies of the ZGW Notificaties API adapter (issue 34), one schema each: a KANAAL, an
 * ABONNEMENT (whole for POST and PUT, every member optional for PATCH) and a notificatie
 * (`Message`). The members, their limits and which are required are those the Notificaties API
 * states (Open Notificaties 1.16, `src/openapi.yaml`), so a client that works against Open
 * Notificaties is refused here exactly when it would be refused there. A body of the wrong shape is
 * answered with the ZGW `ValidatieFout` (./zgw-problems.ts), its `invalidParams` one per member.
 */
import * as Type from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

/** A kenmerk's value, and a filter's: at most 1000 characters (Open Notificaties' `Filter.value`). */
const Kenmerken = Type.Record(Type.String(), Type.String({ maxLength: 1000 }));

export const KANAAL_BODY = Type.Object({
  naam: Type.String({ maxLength: 50 }),
  documentatieLink: Type.Optional(Type.String({ format: 'uri', maxLength: 200 })),
  filters: Type.Optional(Type.Array(Type.String({ maxLength: 100 }))),
});
export type KanaalInput = Static<typeof KANAAL_BODY>;

/** PATCH /kanaal/{uuid}: every member optional; `naam` may not change (Open Notificaties' IsImmutableValidator). */
export const KANAAL_PATCH_BODY = Type.Partial(KANAAL_BODY);

const FILTER_GROUP = Type.Object({
  naam: Type.String(),
  filters: Type.Optional(Kenmerken),
});

const CLOUD_EVENT_FILTER_GROUP = Type.Object({
  typeSubstring: Type.String({ maxLength: 255 }),
  filters: Type.Optional(Kenmerken),
});

const ABONNEMENT_MEMBERS = {
  callbackUrl: Type.String({ format: 'uri', maxLength: 200 }),
  auth: Type.String({ maxLength: 1000 }),
  kanalen: Type.Optional(Type.Array(FILTER_GROUP)),
  sendCloudevents: Type.Optional(Type.Boolean()),
  cloudeventFilters: Type.Optional(Type.Array(CLOUD_EVENT_FILTER_GROUP)),
};

export const ABONNEMENT_BODY = Type.Object(ABONNEMENT_MEMBERS);
export type AbonnementInput = Static<typeof ABONNEMENT_BODY>;
export const ABONNEMENT_PATCH_BODY = Type.Partial(ABONNEMENT_BODY);
export type AbonnementPatch = Static<typeof ABONNEMENT_PATCH_BODY>;

export const MESSAGE_BODY = Type.Object({
  kanaal: Type.String({ maxLength: 50 }),
  source: Type.Optional(Type.String({ maxLength: 100 })),
  hoofdObject: Type.String({ format: 'uri' }),
  resource: Type.String({ maxLength: 100 }),
  resourceUrl: Type.String({ format: 'uri' }),
  actie: Type.String({ maxLength: 100 }),
  aanmaakdatum: Type.String({ format: 'date-time' }),
  kenmerken: Type.Optional(Kenmerken),
});
/** A notificatie as published and as delivered to an abonnement's callback. */
export type Notificatie = Static<typeof MESSAGE_BODY>;
