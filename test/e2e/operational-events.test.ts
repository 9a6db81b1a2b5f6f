/**
 * Koerier's own operational events on the laptop host (issue 13, item 3): a target that fails
 * until its subscription is suspended produces a `dev.koerier.subscription.suspended.v1` event,
 * published through the inbound queue, routed and delivered like any event. The operator (a
 * partner whose entitlements name `dev.koerier.`) and the subscription's owner receive it; another
 * subscriber, entitled to every type of partners' data, does not. A partner's webhook answering
 * 415 is told to its owner as `delivery.deadlettered` and `deadletters.notempty`, not to anyone
 * else. No publisher may publish in the namespace.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { operationalEventTypes, SUBSCRIBER_ATTRIBUTE } from '../../functions/core/operations/operational-events.js';
import { apiAs, callApi, KoerierProblem, publishEvent } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { fastSuspension } from '../support/fast-suspension.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type ReceiverScript,
} from '../support/https-receiver.js';
import { eventually, staysQuiet } from '../support/waiting.js';
import { problemTypeUri } from '../support/problem-types.js';

const authority = createLocalCertificateAuthority();
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e';
let koerier: TestHost;
let dir: string;
const receivers: HttpsReceiver[] = [];
const tokens: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-operations-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber,ops-operator,other-subscriber',
    [settingEnv.publishers]: JSON.stringify({ 'dev-publisher': [''], 'dev-subscriber': [] }),
    // `other-subscriber` may receive every type of partners' data; only `ops-operator` is an operator.
    [settingEnv.entitlements]: JSON.stringify({
      'dev-subscriber': [{ typePrefix: '' }],
      'other-subscriber': [{ typePrefix: '' }],
      'ops-operator': [{ typePrefix: 'dev.koerier.' }],
    }),
    ...fastSuspension(),
    [settingEnv.deliveryConnectTimeoutMs]: '500',
    [settingEnv.deliveryResponseTimeoutMs]: '1000',
  });
  tokens['dev-publisher'] = await koerier.token('dev-publisher', ['events:publish']);
  for (const client of ['dev-subscriber', 'ops-operator', 'other-subscriber'])
    tokens[client] = await koerier.host.issueToken(client, ['subscriptions:manage']);
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function api(
  client: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return callApi(koerier.url, tokens[client], method, path, body);
}

async function subscribe(
  client: string,
  types: readonly string[],
  script: ReceiverScript = scripts.always({ respond: 204 }),
) {
  const receiver = await startHttpsReceiver({ authority, script });
  receivers.push(receiver);
  const created = await api(client, 'POST', '/subscriptions', {
    sink: receiver.url,
    types,
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { receiver, id: created.body['id'] as string };
}

/** The CloudEvents a receiver got (structured mode), of `type`, about subscription `about`. */
function received(receiver: HttpsReceiver, type: string, about?: string): Record<string, unknown>[] {
  return receiver.requests
    .map((request) => JSON.parse(request.body) as Record<string, unknown>)
    .filter((event) => event['type'] === type && (about === undefined || event['subject'] === about));
}

describe.concurrent('operational events on the laptop host', () => {
  it('EDU-7, EDU-18: a target that fails until suspended produces a suspended event: the operator and the owner receive it, another subscriber does not', async () => {
    const operator = await subscribe('ops-operator', [operationalEventTypes.subscriptionSuspended]);
    const owner = await subscribe('dev-subscriber', [operationalEventTypes.subscriptionSuspended]);
    const other = await subscribe('other-subscriber', [operationalEventTypes.subscriptionSuspended]);
    const type = `nl.example.ops.${randomUUID().slice(0, 8)}.v1`;
    const failing = await subscribe('dev-subscriber', [type], scripts.always({ respond: 500 }));

    await publishEvent(apiAs(koerier.url, tokens['dev-publisher']!), {
      source: SOURCE,
      type,
      data: { hello: 'world' },
    });
    await eventually(
      'the failing subscription suspended',
      async () => (await api('dev-subscriber', 'GET', `/subscriptions/${failing.id}`)).body['status'] === 'suspended',
      { timeoutMs: 30_000 },
    );
    const [told] = await eventually(
      'the suspended event at the operator',
      () =>
        received(operator.receiver, operationalEventTypes.subscriptionSuspended, failing.id)[0] &&
        received(operator.receiver, operationalEventTypes.subscriptionSuspended, failing.id),
      {
        timeoutMs: 15_000,
      },
    );
    expect(told).toMatchObject({
      specversion: '1.0',
      source: koerier.url,
      subject: failing.id,
      [SUBSCRIBER_ATTRIBUTE]: 'dev-subscriber',
      datacontenttype: 'application/json',
      data: { subscriptionId: failing.id, status: 'suspended', suspendedFor: 'target-failing' },
    });
    expect((told!['data'] as { reason: string }).reason).toMatch(/No delivery has succeeded since .*500.*resume/);
    await eventually(
      'the suspended event at the owner',
      () => received(owner.receiver, operationalEventTypes.subscriptionSuspended, failing.id).length === 1,
      {
        timeoutMs: 15_000,
      },
    );
    // The owner's and the operator's copies went out; the other subscriber's would have been routed by the same batch.
    await staysQuiet(
      'operational event at another subscriber',
      () => received(other.receiver, operationalEventTypes.subscriptionSuspended, failing.id)[0],
      2_000,
    );
    expect(received(operator.receiver, operationalEventTypes.subscriptionSuspended, failing.id)).toHaveLength(1);
  });

  it("EDU-18: a partner's webhook answering 415 is told to its owner (delivery.deadlettered, deadletters.notempty), not to another subscriber", async () => {
    const wanted = [operationalEventTypes.deliveryDeadLettered, operationalEventTypes.deadLettersNotEmpty];
    const owner = await subscribe('dev-subscriber', wanted);
    const other = await subscribe('other-subscriber', wanted);
    const type = `nl.example.ops.${randomUUID().slice(0, 8)}.v1`;
    const refusing = await subscribe('dev-subscriber', [type], scripts.always({ respond: 415 }));

    // One after the other: the second is dead-lettered once the first is stored, so it finds the list not empty.
    // (Two dispatches at the same moment may each find it empty and each tell it: docs/OPERATIONS.md.)
    await publishEvent(apiAs(koerier.url, tokens['dev-publisher']!), {
      source: SOURCE,
      type,
      data: { hello: 'world' },
    });
    await eventually(
      'the first dead-lettered event at the owner',
      () => received(owner.receiver, operationalEventTypes.deliveryDeadLettered, refusing.id).length === 1,
      {
        timeoutMs: 20_000,
      },
    );
    await publishEvent(apiAs(koerier.url, tokens['dev-publisher']!), {
      source: SOURCE,
      type,
      data: { hello: 'world' },
    });
    await eventually(
      'two dead-lettered events at the owner',
      () => received(owner.receiver, operationalEventTypes.deliveryDeadLettered, refusing.id).length === 2,
      {
        timeoutMs: 20_000,
      },
    );
    const deadLettered = received(owner.receiver, operationalEventTypes.deliveryDeadLettered, refusing.id);
    expect(deadLettered[0]).toMatchObject({
      data: { subscriptionId: refusing.id, reason: expect.any(String), attempts: 1 },
    });
    expect((deadLettered[0]!['data'] as { events: { source: string; type: string }[] }).events).toEqual([
      expect.objectContaining({ source: SOURCE, type }),
    ]);
    // Told once, for the first dead letter only (the second found the list no longer empty).
    await eventually(
      'the not-empty event',
      () => received(owner.receiver, operationalEventTypes.deadLettersNotEmpty, refusing.id).length === 1,
      {
        timeoutMs: 10_000,
      },
    );
    await staysQuiet(
      'operational event at another subscriber',
      () => received(other.receiver, operationalEventTypes.deliveryDeadLettered, refusing.id)[0],
      1_500,
    );
    expect(received(owner.receiver, operationalEventTypes.deadLettersNotEmpty, refusing.id)).toHaveLength(1);
  });

  it('EDU-IN: no publisher may publish in the operational namespace (403 type-reserved)', async () => {
    const refused = await publishEvent(apiAs(koerier.url, tokens['dev-publisher']!), {
      source: SOURCE,
      type: operationalEventTypes.subscriptionSuspended,
      data: { hello: 'world' },
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KoerierProblem);
    expect((refused as KoerierProblem).status).toBe(403);
    expect((refused as KoerierProblem).body).toMatchObject({
      type: problemTypeUri('type-reserved'),
      errors: [{ attribute: 'type', rule: 'reserved-type' }],
    });
  });
});
