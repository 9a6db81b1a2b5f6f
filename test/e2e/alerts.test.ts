/**
 * Out-of-band alerts on the laptop host (issue 30 item 3, SELF-3): a receiver that fails until its
 * subscription is suspended produces an alert e-mail, written as an .eml file in the host's state
 * directory (`<stateDir>/alert-mail`), and a POST to the subscription's incoming webhook, a plain
 * local HTTP server on another host name than the sink. Twenty subscriptions that fail at once
 * make one digest e-mail that lists all twenty, not twenty e-mails.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { apiAs, callApi, publishEvent } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { fastSuspension } from '../support/fast-suspension.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

const authority = createLocalCertificateAuthority();
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e';
let koerier: TestHost;
let failing: HttpsReceiver;
let chat: Server;
let chatUrl: string;
const chatPosts: { path: string; body: string }[] = [];
const tokens: Record<string, string> = {};

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.publishers]: JSON.stringify({ 'dev-publisher': [''] }),
      [settingEnv.entitlements]: JSON.stringify({ 'dev-subscriber': [{ typePrefix: '' }] }),
      ...fastSuspension({ retryWindowSeconds: 120 }),
    },
    { trustAuthority: authority },
  );
  tokens['dev-publisher'] = await koerier.token('dev-publisher', ['events:publish']);
  tokens['dev-subscriber'] = await koerier.host.issueToken('dev-subscriber', ['subscriptions:manage']);
  failing = await startHttpsReceiver({ authority, script: scripts.always({ respond: 500 }) });
  chat = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      chatPosts.push({ path: request.url ?? '', body });
      response.writeHead(200).end('1');
    });
  });
  await new Promise<void>((resolve) => chat.listen(0, '127.0.0.1', resolve));
  // `localhost`, not the sink's 127.0.0.1: the webhook must be on another host than the sink.
  chatUrl = `http://localhost:${(chat.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await failing?.close();
  await new Promise((resolve) => chat?.close(resolve));
  await koerier?.stop();
});

const api = (method: string, path: string, body?: unknown) =>
  callApi(koerier.url, tokens['dev-subscriber'], method, path, body);

async function subscribe(type: string, alerts: Record<string, unknown>): Promise<string> {
  const created = await api('POST', '/subscriptions', {
    sink: failing.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: failing.sinkCredential,
    alerts,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body['id'] as string;
}

interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly body: string;
}

/** The .eml files the host wrote, read as header and body. */
async function mails(): Promise<Mail[]> {
  const folder = koerier.host.environment[settingEnv.alertMailDir]!;
  const names = await readdir(folder).catch(() => [] as string[]);
  return Promise.all(
    names
      .filter((name) => name.endsWith('.eml'))
      .map(async (name) => {
        const text = await readFile(join(folder, name), 'utf8');
        const [head = '', ...rest] = text.split('\r\n\r\n');
        const header = (field: string) => new RegExp(`^${field}: (.*)$`, 'm').exec(head)?.[1] ?? '';
        return { to: header('To'), subject: header('Subject'), body: rest.join('\r\n\r\n') };
      }),
  );
}

const suspended = async (id: string) => (await api('GET', `/subscriptions/${id}`)).body['status'] === 'suspended';

describe('out-of-band alerts on the laptop host', () => {
  it('SELF-3, issue 30 item 3: the alert contacts are shown with the subscription; a webhook on the sink’s host is refused', async () => {
    const type = `nl.example.alerts.${randomUUID().slice(0, 8)}.v1`;
    const id = await subscribe(type, { emails: ['beheer@ontvanger.example'] });
    const shown = await api('GET', `/subscriptions/${id}`);
    expect(shown.body['alerts']).toEqual({ emails: ['beheer@ontvanger.example'], deadletterthreshold: 10 });
    const refused = await api('PATCH', `/subscriptions/${id}`, {
      alerts: { webhookurl: `${new URL(failing.url).origin}/alerts` },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('alerts.webhookurl must be on another host than the sink');
    await api('DELETE', `/subscriptions/${id}`);
  });

  it('SELF-3, issue 30 item 3: a receiver that fails until suspended produces an alert e-mail file and a webhook alert', async () => {
    const type = `nl.example.alerts.${randomUUID().slice(0, 8)}.v1`;
    const id = await subscribe(type, { emails: ['beheer@ontvanger.example'], webhookurl: `${chatUrl}/one` });
    await publishEvent(apiAs(koerier.url, tokens['dev-publisher']!), { source: SOURCE, type, data: { n: 1 } });
    await eventually('the subscription suspended', () => suspended(id), { timeoutMs: 30_000 });
    const [mail] = await eventually(
      'the alert e-mail file',
      async () => {
        const found = (await mails()).filter((m) => m.body.includes(id));
        return found.length > 0 && found;
      },
      { timeoutMs: 20_000 },
    );
    expect(mail!.to).toBe('beheer@ontvanger.example');
    expect(mail!.subject).toBe(`[koerier-local] Subscription ${id} suspended`);
    expect(mail!.body).toContain(`POST /subscriptions/${id}/resume`);
    const post = await eventually('the webhook alert', () => chatPosts.find((p) => p.path === '/one'), {
      timeoutMs: 20_000,
    });
    expect((JSON.parse(post.body) as { text: string }).text).toContain(`Subscription ${id}: suspended`);
  });

  it('SELF-3, issue 30 item 3: twenty subscriptions failing at once make one digest e-mail that lists all twenty', async () => {
    const type = `nl.example.alerts.${randomUUID().slice(0, 8)}.v1`;
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await subscribe(type, { emails: ['digest@ontvanger.example'] }));
    await publishEvent(apiAs(koerier.url, tokens['dev-publisher']!), { source: SOURCE, type, data: { n: 20 } });
    for (const id of ids) await eventually(`subscription ${id} suspended`, () => suspended(id), { timeoutMs: 40_000 });
    const digest = await eventually(
      'the digest e-mail',
      async () => (await mails()).find((m) => m.to === 'digest@ontvanger.example'),
      { timeoutMs: 20_000 },
    );
    expect(digest.subject).toBe('[koerier-local] 20 alerts for your subscriptions (20 suspended)');
    for (const id of ids) expect(digest.body).toContain(`Subscription ${id}: suspended`);
    // Give a straggler batch time to show itself: still the one e-mail to this contact.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect((await mails()).filter((m) => m.to === 'digest@ontvanger.example')).toHaveLength(1);
  });
});
