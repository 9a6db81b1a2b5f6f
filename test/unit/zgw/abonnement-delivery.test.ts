import { describe, expect, it } from 'vitest';
import type { DeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import { requestWithoutToken, withAccessToken } from '../../../functions/core/delivery/webhook-request.js';
import { filterMatches } from '../../../functions/core/subscriptions/filters.js';
import { abonnementSubscriptionDraft, kanalenFilter } from '../../../functions/core/zgw/abonnement-subscription.js';
import { notificatieAsCloudEvent } from '../../../functions/core/zgw/notificatie-mapping.js';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import { eventDataOf, referencingEvent } from '../../../functions/core/claim-check/payload-reference.js';
import { setup, task } from '../delivery/dispatcher-harness.js';

const notificatie = {
  kanaal: 'zaken',
  hoofdObject: 'https://openzaak.example/zaken/api/v1/zaken/1',
  resource: 'zaak',
  resourceUrl: 'https://openzaak.example/zaken/api/v1/zaken/1',
  actie: 'create',
  aanmaakdatum: '2026-11-29T09:00:00Z',
  kenmerken: { bronorganisatie: '002220647' },
};

const message = (event: string): DeliveryMessage => ({
  version: 1,
  deliveryId: '5b7e2c6a-5d1e-4c3f-9a0b-1c2d3e4f5a6b',
  subscriptionId: 's1',
  events: [event],
  createdAt: 0,
});

describe('issue 34 item 4: an abonnement delivered by a push subscription', () => {
  it('ZGW-4: a zgw-notificatie delivery is the notificatie as JSON with the auth as the whole Authorization header', () => {
    const event = JSON.stringify(notificatieAsCloudEvent(notificatie, 'openzaak', 'urn:nld:oin:1:systeem:openzaak'));
    const parts = {
      message: message(event),
      sink: 'https://zac.example/cb',
      format: 'structured',
      origin: 'k',
    } as const;
    const request = withAccessToken(
      requestWithoutToken({ ...parts, bodyShape: 'zgw-notificatie' }),
      'Token zac-geheim',
      true,
    );
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['authorization']).toBe('Token zac-geheim');
    expect(JSON.parse(request.body.toString())).toEqual(notificatie);
    // Without the shape, the same delivery is the CloudEvent with a bearer token.
    const cloudEvent = withAccessToken(requestWithoutToken(parts), 't');
    expect(cloudEvent.headers['authorization']).toBe('Bearer t');
    expect(cloudEvent.body.toString()).toBe(event);
  });

  it('ZGW-4: an event without a notificatie cannot be rendered for an abonnement', () => {
    const event = JSON.stringify({ specversion: '1.0', id: '1', source: 's', type: 'nl.example.other', data: {} });
    expect(() =>
      requestWithoutToken({
        message: message(event),
        sink: 'https://zac.example/cb',
        format: 'structured',
        origin: 'k',
        bodyShape: 'zgw-notificatie',
      }),
    ).toThrow();
  });

  it('ZGW-4: a notificatie whose data is in the claim check goes out whole once the claim check gives it back, and is never sent without it', async () => {
    const event = JSON.stringify(notificatieAsCloudEvent(notificatie, 'openzaak', 'urn:nld:oin:1:systeem:openzaak'));
    const referenced = referencingEvent(JSON.parse(event), 'https://koerier.test/payloads/p1', eventDataOf(event)!);
    const abonnement = { bodyShape: 'zgw-notificatie' as const };
    const back = setup({ subscription: abonnement });
    back.deps.outgoingEvents = async (_subscription, events) => events.map((e) => (e === referenced ? event : e));
    await dispatchBatch([task({ events: [referenced] })], back.deps);
    expect(back.sent.map((body) => JSON.parse(body) as unknown)).toEqual([notificatie]);

    // The claim check answers with the reference (the object expired): the attempt fails, nothing goes out.
    const gone = setup({ subscription: abonnement });
    gone.deps.outgoingEvents = async (_subscription, events) => events;
    await dispatchBatch([task({ events: [referenced] })], gone.deps);
    expect(gone.sent).toEqual([]);
    expect(gone.store.attempts[0]!.records[0]).toMatchObject({ outcome: 'retrying', error: { code: 'claim-check' } });
  });

  it("ZGW-4: the subscription routes the abonnement's kanalen only, is active without a handshake, and carries the shape", () => {
    const abonnement = {
      uuid: '4784d239-9b9f-48d5-be55-1f86764b8fd1',
      clientId: 'zac',
      callbackUrl: 'https://zac.example/cb',
      sealedAuth: 'x',
      kanalen: [
        { naam: 'zaken', filters: {} },
        { naam: 'documenten', filters: {} },
      ],
      sendCloudevents: false,
      cloudeventFilters: [],
      createdAt: '2026-11-29T09:00:00Z',
    };
    const draft = abonnementSubscriptionDraft(abonnement, { kind: 'authorization', ciphertext: 'c' }, 'now');
    expect(draft).toMatchObject({
      id: abonnement.uuid,
      owner: 'zac',
      sink: abonnement.callbackUrl,
      status: 'active',
      validation: 'agreed',
      bodyShape: 'zgw-notificatie',
    });
    const filter = kanalenFilter(abonnement);
    expect(filterMatches(filter, { type: 'nl.overheid.zaken.zaak.create' })).toBe(true);
    expect(filterMatches(filter, { type: 'nl.overheid.documenten.document.update' })).toBe(true);
    expect(filterMatches(filter, { type: 'nl.overheid.zakenarchief.zaak.create' })).toBe(false);
    expect(filterMatches(kanalenFilter({ kanalen: [] }), { type: 'nl.overheid.zaken.zaak.create' })).toBe(false);
  });
});
