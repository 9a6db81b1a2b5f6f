/**
 * Issue 34's leftovers for abonnementen: their filters on kenmerken decide delivery (ZGW-8), with
 * Open Notificaties' semantics (`match_pattern`, one of the kanaal's groups), in the router (no
 * delivery queued, the event's route record without the abonnement) and at hand-out (filters changed
 * after routing); `sendCloudevents` delivers the CloudEvent (ZGW-9).
 */
import { describe, expect, it } from 'vitest';
import { eventDataOf, referencingEvent } from '../../../functions/core/claim-check/payload-reference.js';
import { EventText } from '../../../functions/core/cloudevents/event-text.js';
import {
  decodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import { queueOutbox } from '../../../functions/core/delivery-message/outbox.js';
import { requestWithoutToken } from '../../../functions/core/delivery/webhook-request.js';
import { routeCandidateOf, SubscriptionMatcher } from '../../../functions/core/routing/matcher.js';
import { mayReceive } from '../../../functions/core/routing/may-receive.js';
import { routeInboundEvents } from '../../../functions/core/routing/route-events.js';
import type { AbonnementRecord } from '../../../functions/core/zgw/ports.js';
import { abonnementSubscriptionDraft } from '../../../functions/core/zgw/abonnement-subscription.js';
import { notificatieAsCloudEvent } from '../../../functions/core/zgw/notificatie-mapping.js';
import type { Notificatie } from '../../../functions/core/zgw/zgw-bodies.js';
import { abonnementTakes } from '../../../functions/core/zgw/zgw-filters.js';
import { entitledOwners, InMemoryLedger, InMemoryRouteIndex } from '../routing/routing-fakes.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:openzaak';

const notificatie = (kenmerken: Record<string, string>, kanaal = 'zaken'): Notificatie => ({
  kanaal,
  hoofdObject: 'https://openzaak.example/zaken/api/v1/zaken/1',
  resource: 'zaak',
  resourceUrl: 'https://openzaak.example/zaken/api/v1/zaken/1',
  actie: 'create',
  aanmaakdatum: '2026-11-29T09:00:00Z',
  kenmerken,
});

const eventOf = (n: Notificatie) => new EventText(JSON.stringify(notificatieAsCloudEvent(n, 'openzaak', SOURCE)));

const abonnement = (kanalen: AbonnementRecord['kanalen'], sendCloudevents = false): AbonnementRecord => ({
  uuid: '4784d239-9b9f-48d5-be55-1f86764b8fd1',
  clientId: 'zac',
  callbackUrl: 'https://zac.example/cb',
  sealedAuth: 'x',
  kanalen,
  sendCloudevents,
  cloudeventFilters: [],
  createdAt: '2026-11-29T09:00:00Z',
});

const draftOf = (record: AbonnementRecord) =>
  abonnementSubscriptionDraft(record, { kind: 'authorization', ciphertext: 'c' }, '2026-11-29T09:00:00Z');

describe("issue 34: an abonnement's filters on kenmerken decide its delivery", () => {
  it("ZGW-8: Open Notificaties' match: a filter on a kenmerk the notificatie lacks does not count, `*` takes any value, else the value must be equal", () => {
    const terms = { kanalen: [{ naam: 'zaken', filters: { bronorganisatie: '111', zaak_type: '*' } }] };
    expect(abonnementTakes(terms, eventOf(notificatie({ bronorganisatie: '111', zaakType: 'x' })))).toBe(true);
    expect(abonnementTakes(terms, eventOf(notificatie({ bronorganisatie: '222', zaakType: 'x' })))).toBe(false);
    expect(abonnementTakes(terms, eventOf(notificatie({ zaakType: 'x' })))).toBe(true);
    expect(abonnementTakes(terms, eventOf(notificatie({})))).toBe(true);
  });

  it("ZGW-8: one of the groups on the notificatie's kanaal must match; a group on another kanaal does not let it through", () => {
    const terms = {
      kanalen: [
        { naam: 'zaken', filters: { bronorganisatie: '111' } },
        { naam: 'zaken', filters: { bronorganisatie: '222' } },
        { naam: 'documenten', filters: {} },
      ],
    };
    expect(abonnementTakes(terms, eventOf(notificatie({ bronorganisatie: '222' })))).toBe(true);
    expect(abonnementTakes(terms, eventOf(notificatie({ bronorganisatie: '333' })))).toBe(false);
    expect(abonnementTakes(terms, eventOf(notificatie({ bronorganisatie: '333' }, 'documenten')))).toBe(true);
  });

  it('ZGW-8: a notificatie whose data went to the claim check is filtered on the kenmerken it carries in `zgwkenmerken`', () => {
    const terms = { kanalen: [{ naam: 'zaken', filters: { bronorganisatie: '111' } }] };
    const byReference = (n: Notificatie) => {
      const event = notificatieAsCloudEvent(n, 'openzaak', SOURCE);
      const data = eventDataOf(JSON.stringify(event))!;
      const json = referencingEvent({ ...event }, 'https://koerier.example/v1/payloads/p1', data);
      expect(JSON.parse(json)).not.toHaveProperty('data');
      return new EventText(json);
    };
    expect(abonnementTakes(terms, byReference(notificatie({ bronorganisatie: '222', toelichting: 'x' })))).toBe(false);
    expect(abonnementTakes(terms, byReference(notificatie({ bronorganisatie: '111', toelichting: 'x' })))).toBe(true);
    expect(notificatieAsCloudEvent(notificatie({}), 'openzaak', SOURCE)).not.toHaveProperty('zgwkenmerken');
  });

  it('ZGW-8: the router queues a notificatie only for the abonnementen whose filters it passes; the route record names only those', async () => {
    const matching = draftOf({
      ...abonnement([{ naam: 'zaken', filters: { bronorganisatie: '111' } }]),
      uuid: 'a-111',
    });
    const other = draftOf({ ...abonnement([{ naam: 'zaken', filters: { bronorganisatie: '222' } }]), uuid: 'a-222' });
    const index = new InMemoryRouteIndex().add(routeCandidateOf(matching)).add(routeCandidateOf(other));
    const ledger = new InMemoryLedger();
    const queued: DeliveryMessage[] = [];
    const event = eventOf(notificatie({ bronorganisatie: '111' }));
    const report = await routeInboundEvents([{ recordId: 'r1', body: event.json }], {
      matcher: new SubscriptionMatcher(index),
      ledger,
      entitlements: entitledOwners(),
      outbox: queueOutbox({
        deliveryQueue: { send: async (bodies) => void queued.push(...bodies.map(decodeDeliveryMessage)) },
        pullQueues: { send: async () => undefined },
      }),
      now: () => 0,
      lockMs: 120_000,
      ttlSeconds: 3600,
      maxMessageBytes: 200_000,
    });
    expect(report).toMatchObject({ failedRecordIds: [], routed: 1, deliveries: 1 });
    expect(queued.map((message) => message.subscriptionId)).toEqual(['a-111']);
    expect(ledger.routes.get(event.id)?.subscriptionIds).toEqual(['a-111']);
  });

  it('ZGW-8: a notificatie queued before the filters changed is withheld at hand-out, not delivered', () => {
    const event = eventOf(notificatie({ bronorganisatie: '111' }));
    const before = { ...draftOf(abonnement([{ naam: 'zaken', filters: { bronorganisatie: '111' } }])), routeKeys: [] };
    const after = { ...draftOf(abonnement([{ naam: 'zaken', filters: { bronorganisatie: '222' } }])), routeKeys: [] };
    expect(mayReceive(before, event, entitledOwners())).toBe('receives');
    expect(mayReceive(after, event, entitledOwners())).toBe('no-longer-matches');
  });
});

describe("issue 34: an abonnement's sendCloudevents", () => {
  it('ZGW-9: with sendCloudevents the delivery is the CloudEvent itself; without, the notificatie', () => {
    const n = notificatie({ bronorganisatie: '111' });
    const event = eventOf(n);
    const render = (sendCloudevents: boolean) => {
      const draft = draftOf(abonnement([{ naam: 'zaken', filters: {} }], sendCloudevents));
      expect(draft.zgwAbonnement).toEqual({ kanalen: [{ naam: 'zaken', filters: {} }] });
      return requestWithoutToken({
        message: { version: 1, deliveryId: 'd', subscriptionId: draft.id, events: [event.json], createdAt: 0 },
        sink: draft.sink,
        format: draft.contentMode,
        origin: 'k',
        bodyShape: draft.bodyShape,
      });
    };
    const asCloudEvent = render(true);
    expect(asCloudEvent.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
    expect(asCloudEvent.body.toString()).toBe(event.json);
    expect(JSON.parse(render(false).body.toString())).toEqual(n);
  });
});
