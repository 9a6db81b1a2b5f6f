/**
 * Koerier's operational events (issue 13, item 3) without emulators: their shape (valid by
 * Koerier's own validator, stable ids), who is entitled to them, and what the dispatcher tells.
 * The end-to-end path on the laptop host: test/e2e/operational-events.test.ts.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { parseCloudEventsRequest } from '../../../functions/core/cloudevents/index.js';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import {
  contractDeprecatedNotices,
  operationalEventJson,
  operationalEventTypes,
  SUBSCRIBER_ATTRIBUTE,
  type OperationalNotice,
} from '../../../functions/core/operations/operational-events.js';
import {
  checkEntitlement,
  entitledToEvent,
  parseEntitlements,
} from '../../../functions/core/subscriptions/entitlements.js';
import { answered, DAY, policy, setup, SUB, T0, task } from '../delivery/dispatcher-harness.js';
import { toldDeadLetter } from '../../../functions/core/delivery/operational-notices.js';
import { eventReferences } from '../../../functions/core/delivery/delivery-views.js';
import type { DeadLetter } from '../../../functions/core/delivery/delivery-records.js';

const notice: OperationalNotice = {
  type: operationalEventTypes.subscriptionSuspended,
  subscription: { id: SUB, owner: 'school' },
  occurrence: ['target-failing', '1700000000000'],
  time: T0,
  data: { status: 'suspended', reason: 'the target answered 500' },
};
/** What a deployment with an OIN sets as `koerier:operationsSource` (the NL GOV form of CE-4). */
const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:koerier';

function readBack(json: string) {
  return parseCloudEventsRequest(
    { headers: { 'content-type': 'application/cloudevents+json' }, body: Buffer.from(json) },
    { maxEventBytes: 1 << 20 },
  );
}

describe('operational events: shape', () => {
  it('CE-6: every operational type is reverse-DNS with one version suffix, and the event passes Koerier’s own validation without warnings', () => {
    for (const type of Object.values(operationalEventTypes)) {
      expect(type).toMatch(/^dev\.koerier\.[a-z]+\.[a-z]+\.v1$/);
      const parsed = readBack(operationalEventJson({ ...notice, type }, SOURCE));
      expect(parsed.events).toHaveLength(1);
      expect(parsed.warnings).toEqual([]);
    }
  });

  it('CE-17: one occurrence is one event id (two instances telling it are deduplicated by the router); another occurrence another id', () => {
    const event = JSON.parse(operationalEventJson(notice, SOURCE)) as Record<string, unknown>;
    expect(event).toMatchObject({
      source: SOURCE,
      subject: SUB,
      [SUBSCRIBER_ATTRIBUTE]: 'school',
      time: new Date(T0).toISOString(),
      data: { subscriptionId: SUB },
    });
    expect(JSON.parse(operationalEventJson({ ...notice, time: T0 + 5000 }, SOURCE)).id).toBe(event['id']);
    expect(
      JSON.parse(operationalEventJson({ ...notice, occurrence: ['target-failing', '1700000009999'] }, SOURCE)).id,
    ).not.toBe(event['id']);
  });
});

describe('operational events: entitlement (EDU-7)', () => {
  const entitlements = parseEntitlements(
    JSON.stringify({
      school: [{ typePrefix: 'nl.edu.' }],
      everything: [{ typePrefix: '' }],
      operator: [{ typePrefix: 'dev.koerier.' }],
      'subscription-watcher': [{ typePrefix: 'dev.koerier.subscription.' }],
      nothing: [],
    }),
  );
  const event = (type: string, owner: string) => ({
    type,
    source: SOURCE,
    attributes: { [SUBSCRIBER_ATTRIBUTE]: owner },
  });

  it("EDU-7: a subscriber receives the operational events about its own subscriptions, and not another's, even with a grant of every type", () => {
    expect(entitledToEvent('school', event(operationalEventTypes.subscriptionSuspended, 'school'), entitlements)).toBe(
      true,
    );
    expect(
      entitledToEvent('nothing', event(operationalEventTypes.subscriptionSuspended, 'nothing'), entitlements),
    ).toBe(true);
    expect(
      entitledToEvent('school', event(operationalEventTypes.subscriptionSuspended, 'everything'), entitlements),
    ).toBe(false);
    expect(
      entitledToEvent('everything', event(operationalEventTypes.subscriptionSuspended, 'school'), entitlements),
    ).toBe(false);
    expect(
      entitledToEvent(
        'everything',
        { type: operationalEventTypes.subscriptionSuspended, source: SOURCE },
        entitlements,
      ),
    ).toBe(false);
  });

  it("EDU-7: an operator (a grant naming the operational namespace) receives every subscription's, within its grant", () => {
    expect(entitledToEvent('operator', event(operationalEventTypes.deliveryDeadLettered, 'school'), entitlements)).toBe(
      true,
    );
    expect(
      entitledToEvent('subscription-watcher', event(operationalEventTypes.subscriptionRetired, 'school'), entitlements),
    ).toBe(true);
    expect(
      entitledToEvent(
        'subscription-watcher',
        event(operationalEventTypes.deliveryDeadLettered, 'school'),
        entitlements,
      ),
    ).toBe(false);
  });

  it('EDU-7: every client may subscribe to operational types, with or without grants; not to them mixed with types it is not granted', () => {
    expect(
      checkEntitlement('nothing', { types: [operationalEventTypes.subscriptionSuspended] }, entitlements).entitled,
    ).toBe(true);
    expect(checkEntitlement('school', { filters: [{ prefix: { type: 'dev.koerier.' } }] }, entitlements).entitled).toBe(
      true,
    );
    expect(
      checkEntitlement('nothing', { types: [operationalEventTypes.subscriptionSuspended, 'nl.edu.x.v1'] }, entitlements)
        .entitled,
    ).toBe(false);
    expect(checkEntitlement('nothing', {}, entitlements).entitled).toBe(false);
  });
});

describe('operational events: what the dispatcher tells', () => {
  function withOperations(options: Parameters<typeof setup>[0] = {}) {
    const harness = setup(options);
    const told: OperationalNotice[] = [];
    harness.deps.operations = { publish: async (notices) => void told.push(...notices) };
    return { ...harness, told };
  }

  it('EDU-12: a suspension is told once, to the owner, with the reason and the time the target began failing', async () => {
    const { deps, store, told } = withOperations({ answers: [answered(502)] });
    store.target = { consecutiveFailures: 2, failingSince: T0 - 3 * DAY * 1000, lastFailureAt: T0 - 60_000 };
    await dispatchBatch([task()], deps);
    expect(told).toEqual([
      expect.objectContaining({
        type: operationalEventTypes.subscriptionSuspended,
        subscription: { id: SUB, owner: 'subscriber' },
        occurrence: ['target-failing', String(T0 - 3 * DAY * 1000)],
        data: expect.objectContaining({
          status: 'suspended',
          suspendedFor: 'target-failing',
          reason: expect.stringContaining('the target answered 502'),
        }),
      }),
    ]);
  });

  it('EDU-18: dead letters are told each, and the first one of an empty list also as "no longer empty" (once per batch)', async () => {
    const { deps, told } = withOperations({ answers: [answered(415), answered(415)] });
    await dispatchBatch([task({ events: ['{"id":"a","source":"urn:s","type":"nl.x.v1"}'] }), task()], deps);
    expect(told.map((n) => n.type).sort()).toEqual(
      [
        operationalEventTypes.deadLettersNotEmpty,
        operationalEventTypes.deliveryDeadLettered,
        operationalEventTypes.deliveryDeadLettered,
      ].sort(),
    );
    const first = told.find(
      (n) => n.type === operationalEventTypes.deliveryDeadLettered && (n.data['events'] as unknown[]).length === 1,
    );
    expect(first?.data).toMatchObject({
      reason: 'unsupported-media-type',
      attempts: 1,
      events: [{ id: 'a', source: 'urn:s', type: 'nl.x.v1' }],
    });
  });

  it('EDU-18: a subscription that already has dead letters is not told "no longer empty" again', async () => {
    const { deps, store, told } = withOperations({ answers: [answered(415)] });
    store.listDeadLetters = async () => ({ items: [{} as never] });
    await dispatchBatch([task()], deps);
    expect(told.map((n) => n.type)).toEqual([operationalEventTypes.deliveryDeadLettered]);
  });

  it('a dead letter of a delivery carrying operational events is not told (an operator’s failing webhook would be told about itself without end)', async () => {
    const { deps, told } = withOperations({ answers: [answered(415)] });
    await dispatchBatch([task({ events: [operationalEventJson(notice, SOURCE)] })], deps);
    expect(told).toEqual([]);
  });

  it('deliveries parked while a subscription is suspended are not told one by one (the suspension was)', async () => {
    const { deps, store, told } = withOperations({
      subscription: { status: 'suspended', statusReason: 'keeps failing' },
    });
    await dispatchBatch([task(), task()], deps);
    expect(store.deadLetters).toHaveLength(2);
    expect(told).toEqual([]);
  });

  const idOf = (n: OperationalNotice) => (JSON.parse(operationalEventJson(n, SOURCE)) as { id: string }).id;
  const deliveryIdOf = (t: ReturnType<typeof task>) => (JSON.parse(t.body) as { deliveryId: string }).deliveryId;

  it('EDU-12: a retirement (410 Gone) is told to the owner with the reason', async () => {
    const { deps, told } = withOperations({ answers: [answered(410)] });
    await dispatchBatch([task()], deps);
    const retired = told.find((n) => n.type === operationalEventTypes.subscriptionRetired);
    expect(retired).toMatchObject({
      subscription: { id: SUB, owner: 'subscriber' },
      time: T0,
      data: { status: 'retired', reason: expect.stringContaining('410') },
    });
  });

  it('EDU-18: dead letters are told to the owner, each under an id of its own; "no longer empty" names the first and where to list them', async () => {
    const { deps, told } = withOperations({ answers: [answered(415), answered(415)] });
    const [first, second] = [task(), task()];
    await dispatchBatch([first, second], deps);
    const deadLettered = told.filter((n) => n.type === operationalEventTypes.deliveryDeadLettered);
    const notEmpty = told.find((n) => n.type === operationalEventTypes.deadLettersNotEmpty)!;
    for (const notice of told) expect(notice.subscription).toEqual({ id: SUB, owner: 'subscriber' });
    expect(notEmpty.data).toEqual({
      firstDeliveryId: deliveryIdOf(first),
      deadLetters: `/v1/subscriptions/${SUB}/dead-letters`,
    });
    // The router drops an operational event whose id it has seen (CE-17): two dead letters must not share one.
    expect(idOf(deadLettered[0]!)).not.toBe(idOf(deadLettered[1]!));
    // Nor two times the list became non-empty, with another first dead letter.
    const again = withOperations({ answers: [answered(415)] });
    await dispatchBatch([task()], again.deps);
    expect(idOf(again.told.find((n) => n.type === operationalEventTypes.deadLettersNotEmpty)!)).not.toBe(
      idOf(notEmpty),
    );
  });

  it('EDU-18: the dead letter of a redrive is told with the dead letter it redrove; an event without a type is left out of its events', async () => {
    const { deps, told } = withOperations({ answers: [answered(415), answered(415)] });
    const [redriven, untyped] = [
      task({ redriveOf: 'd-old', events: ['{"id":"a","source":"urn:s","type":"nl.x.v1"}'] }),
      task({ events: ['{"id":"b","source":"urn:s"}'] }),
    ];
    await dispatchBatch([redriven, untyped], deps);
    const toldOf = (t: ReturnType<typeof task>) =>
      told.find(
        (n) => n.type === operationalEventTypes.deliveryDeadLettered && n.data['deliveryId'] === deliveryIdOf(t),
      )?.data;
    expect(toldOf(redriven)).toMatchObject({
      redriveOf: 'd-old',
      events: [{ id: 'a', source: 'urn:s', type: 'nl.x.v1' }],
    });
    expect(toldOf(untyped)).toMatchObject({ events: [] });
    expect(toldOf(untyped)).not.toHaveProperty('redriveOf');
  });

  it('EDU-18: the "no longer empty" check reads at most one dead letter, once per batch', async () => {
    const { deps, store } = withOperations({ answers: [answered(415), answered(415)] });
    const reads: unknown[] = [];
    store.listDeadLetters = async (...args: unknown[]) => {
      reads.push(args);
      return { items: [] };
    };
    await dispatchBatch([task(), task()], deps);
    expect(reads).toEqual([[SUB, { limit: 1 }]]);
  });

  it('EDU-18: when the dead letters cannot be read, the dead letter is still told, without "no longer empty", and a warning says why', async () => {
    const { deps, store, told, messages } = withOperations({ answers: [answered(415)] });
    store.listDeadLetters = async () => Promise.reject(new Error('throttled'));
    await dispatchBatch([task()], deps);
    expect(told.map((n) => n.type)).toEqual([operationalEventTypes.deliveryDeadLettered]);
    expect(messages('dead letters not read').map((l) => [l.level, l.fields])).toEqual([
      ['warn', { subscriptionId: SUB, error: 'throttled' }],
    ]);
  });

  it('EDU-18: a dead letter written on the last receive while the target state cannot be read is kept and its message let go; it is not told (no owner is known)', async () => {
    const { deps, store, told } = withOperations();
    store.failures.getTargets = true;
    const last = task({}, policy.maxReceiveCount);
    const outcome = await dispatchBatch([last], deps);
    expect(outcome.decisions).toEqual([{ messageId: last.messageId, action: 'done' }]);
    expect(store.deadLetters.map((d) => d.deadLetter.reason)).toEqual(['exhausted']);
    expect(told).toEqual([]);
  });

  it('an operational event that cannot be published is logged; the dead letter and the batch stand', async () => {
    const { deps, store, messages } = withOperations({ answers: [answered(415)] });
    deps.operations = {
      publish: async () => {
        throw new Error('queue down');
      },
    };
    const outcome = await dispatchBatch([task()], deps);
    expect(outcome.decisions.map((d) => d.action)).toEqual(['done']);
    expect(store.deadLetters).toHaveLength(1);
    expect(messages('operational events not published').map((l) => [l.level, l.fields['error']])).toEqual([
      ['error', 'queue down'],
    ]);
  });
});

describe('which dead letters are told (toldDeadLetter)', () => {
  const partnerEvent = '{"specversion":"1.0","id":"a","source":"urn:s","type":"nl.x.v1"}';
  const deadLetter = (over: Partial<DeadLetter>): DeadLetter =>
    ({
      subscriptionId: SUB,
      deliveryId: 'd-1',
      events: [partnerEvent],
      createdAt: T0,
      reason: 'exhausted',
      detail: '',
      attempts: 1,
      lastAttempts: [],
      ...over,
    }) as DeadLetter;

  it('EDU-18: a dead letter parked while the subscription is not active is not told (its suspension or retirement was)', () => {
    for (const reason of ['subscription-suspended', 'subscription-retired', 'subscription-not-active'] as const) {
      expect(toldDeadLetter(deadLetter({ reason }))).toBe(false);
    }
    expect(toldDeadLetter(deadLetter({ reason: 'exhausted' }))).toBe(true);
  });

  it('a dead letter carrying any operational event is not told, even beside partner events; an unreadable event does not count as one', () => {
    expect(toldDeadLetter(deadLetter({ events: [partnerEvent, operationalEventJson(notice, SOURCE)] }))).toBe(false);
    expect(toldDeadLetter(deadLetter({ events: ['not json', partnerEvent] }))).toBe(true);
  });

  it('EDU-18: the events of a dead letter are named by source, id and type; one that does not read, or lacks one of them, is left out', () => {
    expect(eventReferences([partnerEvent, 'not json', '{"id":"b","source":"urn:s"}'])).toEqual([
      { source: 'urn:s', id: 'a', type: 'nl.x.v1' },
    ]);
  });
});

describe('operational events: the API description', () => {
  const document = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });

  it('every operational type is an OpenAPI webhook, and the events Koerier makes match its schema', () => {
    expect(Object.keys(document.webhooks).sort()).toEqual(Object.values(operationalEventTypes).sort());
    const ajv = new Ajv({ strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(document.components.schemas.OperationalEvent);
    for (const type of Object.values(operationalEventTypes)) {
      const event: unknown = JSON.parse(operationalEventJson({ ...notice, type }, SOURCE));
      expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    }
    expect(
      validate({ ...(JSON.parse(operationalEventJson(notice, SOURCE)) as object), type: 'nl.example.other.v1' }),
    ).toBe(false);
  });
});

describe('contract deprecation (issue 14, item 3)', () => {
  it('EDU-21: a deprecated contract version is told to each consuming subscription, to its owner, with the sunset date', () => {
    const notices = contractDeprecatedNotices({
      contract: 'leerling-events',
      version: '1.2.0',
      sunset: '2027-06-30',
      eventTypes: ['nl.example.leerling.ingeschreven.v1'],
      consumers: [
        { subscriptionId: 's-1', owner: 'client-a' },
        { subscriptionId: 's-2', owner: 'client-b' },
      ],
      at: '2026-11-23T12:00:00Z',
    });
    expect(notices.map((n) => [n.type, n.subscription.id, n.subscription.owner])).toEqual([
      [operationalEventTypes.contractDeprecated, 's-1', 'client-a'],
      [operationalEventTypes.contractDeprecated, 's-2', 'client-b'],
    ]);
    const event = JSON.parse(operationalEventJson(notices[0]!, SOURCE)) as Record<string, unknown>;
    expect(event).toMatchObject({
      subject: 's-1',
      [SUBSCRIBER_ATTRIBUTE]: 'client-a',
      data: { contract: 'leerling-events', version: '1.2.0', sunset: '2027-06-30' },
    });
  });
});

describe('attempt records name their event (issue 13, item 5)', () => {
  it('EDU-18: the history record carries source, id and type of each event and the dead letter it redrives; the progress kept per delivery does not repeat them', async () => {
    const { deps, store } = setup({ answers: [answered(500)] });
    const published = JSON.stringify({
      specversion: '1.0',
      id: 'e-1',
      source: 'urn:s',
      type: 'nl.x.v1',
      data: { secret: 1 },
    });
    await dispatchBatch([task({ events: [published], redriveOf: 'd-old' })], deps);
    const [record] = store.attempts[0]!.records;
    expect(record).toMatchObject({ events: [{ source: 'urn:s', id: 'e-1', type: 'nl.x.v1' }], redriveOf: 'd-old' });
    expect(JSON.stringify(record)).not.toContain('secret');
    const [kept] = [...store.progress.values()];
    expect(kept!.progress.lastAttempts[0]).not.toHaveProperty('events');
  });
});
