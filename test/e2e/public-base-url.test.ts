/**
 * Issue 31, item 1 on the laptop host: with KOERIER_PUBLIC_BASE_URL set (a host reached through a
 * tunnel or a reverse proxy, as a deployment is through `koerier:publicDomain`), every link Koerier
 * hands out names that host, not the one it listens on: a published event's `dataref`, an
 * operational event's `source`, the validation callback, and the API description's `servers` and
 * token URL. The setting is given as an origin alone, and read as the API's URL there (`/v1`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { operationalEventTypes } from '../../functions/core/operations/operational-events.js';
import { apiAs, callApi, publishEvents } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';

const PUBLIC_ORIGIN = 'https://koerier.gemeente.example';
const PUBLIC_BASE = `${PUBLIC_ORIGIN}/v1`;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:public-base';
const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let subscriber: string;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.publicBaseUrl]: PUBLIC_ORIGIN,
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.publishers]: JSON.stringify({ 'dev-publisher': [''] }),
      [settingEnv.entitlements]: JSON.stringify({ 'dev-subscriber': [{ typePrefix: '' }] }),
    },
    { trustAuthority: authority },
  );
  subscriber = await koerier.host.issueToken('dev-subscriber', ['subscriptions:manage', 'events:consume']);
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
});

async function receiver(script = scripts.always({ respond: 204 })): Promise<HttpsReceiver> {
  const started = await startHttpsReceiver({ authority, script });
  receivers.push(started);
  return started;
}

/** Long polls the pull subscription until `count` events are there. */
async function receiveEvents(id: string, count: number): Promise<Record<string, unknown>[]> {
  const events: Record<string, unknown>[] = [];
  for (let round = 0; round < 12 && events.length < count; round++) {
    const answer = await callApi(koerier.url, subscriber, 'POST', `/subscriptions/${id}/events/receive`, {
      maxevents: 10,
      waitseconds: 5,
    });
    expect(answer.status).toBe(200);
    events.push(...(answer.body['events'] as Record<string, unknown>[]));
  }
  return events;
}

describe('issue 31 item 1: KOERIER_PUBLIC_BASE_URL on the laptop host', () => {
  it('LIVE-1, issue 31 item 1: a published event’s dataref and an operational event’s source are on the public host, and the dataref is served', async () => {
    expect(koerier.host.config.publicBaseUrl).toBe(PUBLIC_BASE);
    expect(koerier.url).not.toContain('koerier.gemeente.example');
    const type = `nl.example.publicbase.${randomUUID().slice(0, 8)}.v1`;
    const pull = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      delivery: 'pull',
      types: [type, operationalEventTypes.deliveryDeadLettered],
    });
    expect(pull.status, JSON.stringify(pull.body)).toBe(201);
    // A webhook that refuses the event: its dead letter is told to the owner as an operational event.
    const refusing = await receiver(scripts.always({ respond: 415 }));
    const push = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      sink: refusing.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: refusing.sinkCredential,
    });
    expect(push.status, JSON.stringify(push.body)).toBe(201);

    // 100 KB of data: above the 64 KiB inline limit, so it travels by reference (EDU-1).
    const data = 'leerling;klas;\n'.repeat(7000);
    const publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
    await publishEvents(
      publisher,
      JSON.stringify({
        specversion: '1.0',
        id: randomUUID(),
        source: SOURCE,
        type,
        datacontenttype: 'text/plain',
        data,
      }),
    );

    const events = await receiveEvents(pull.body['id'] as string, 2);
    const published = events.find((event) => event['type'] === type);
    const told = events.find((event) => event['type'] === operationalEventTypes.deliveryDeadLettered);
    expect(published?.['dataref']).toMatch(new RegExp(`^${PUBLIC_BASE}/payloads/[A-Za-z0-9_-]{43}$`));
    expect(told?.['source']).toBe(PUBLIC_BASE);
    expect(told?.['subject']).toBe(push.body['id']);
    // The link is this host's route, reached here on the address the host listens on.
    const fetched = await fetch(String(published!['dataref']).replace(PUBLIC_BASE, koerier.url), {
      headers: { authorization: `Bearer ${subscriber}` },
      redirect: 'manual',
    });
    expect([200, 307]).toContain(fetched.status);
  });

  it('LIVE-1, issue 31 item 1: the validation callback a target is given is on the public host', async () => {
    const target = await receiver(scripts.always({ respond: 202 }));
    const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      sink: target.url,
      types: [`nl.example.publicbase.${randomUUID().slice(0, 8)}.v1`],
      sinkcredential: target.sinkCredential,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [handshake] = await target.waitForRequests(1, { filter: (request) => request.method === 'OPTIONS' });
    expect(handshake!.headers['webhook-request-callback']).toMatch(
      new RegExp(`^${PUBLIC_BASE}/subscriptions/${created.body['id'] as string}/validation\\?token=`),
    );
  });

  it('LIVE-1, issue 31 item 1: /openapi.json names the public host in servers and its token URL', async () => {
    const answer = await fetch(`${koerier.url}/openapi.json`);
    expect(answer.status).toBe(200);
    const document = (await answer.json()) as {
      servers: { url: string }[];
      components: { securitySchemes: Record<string, { flows?: { clientCredentials?: { tokenUrl: string } } }> };
    };
    expect(document.servers.map((server) => server.url)).toEqual([PUBLIC_BASE]);
    const tokenUrls = Object.values(document.components.securitySchemes).flatMap((scheme) =>
      scheme.flows?.clientCredentials ? [scheme.flows.clientCredentials.tokenUrl] : [],
    );
    expect(tokenUrls).toEqual([`${PUBLIC_ORIGIN}/oauth/token`]);
    expect(JSON.stringify(document)).not.toContain(new URL(koerier.url).host);
  });
});
