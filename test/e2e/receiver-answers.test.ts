/**
 * Issue 30 item 2 end to end on the laptop host: what a failing receiver answered is kept with its
 * attempts and shown to the subscriber in the API (attempts and dead letters) and by
 * `koerier deliveries` — the first 2 KB of the body and its content type, never its other headers.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { ANSWER_EXCERPT_BYTES } from '../../functions/core/delivery/receiver-answer.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, callApi, publishEvent, type ApiAnswer, type KoerierClient } from '../support/koerier-api.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e-answers';
const PROBLEM = JSON.stringify({
  title: 'Schoolcode 99ZZ is bij ons niet bekend',
  status: 422,
  type: 'https://leerlingadministratie.example/problems/onbekende-school',
});
const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let dir: string;
let publisher: KoerierClient;
let subscriber: string;
let cli: CliUser;
let cliEnv: Record<string, string>;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-answers-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
    [settingEnv.deliveryRetryInitialSeconds]: '1',
    [settingEnv.deliveryRetryMaxDelaySeconds]: '1',
    [settingEnv.deliveryRetryWindowSeconds]: '30',
  });
  publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  cli = await cliUser(koerier.url);
  cliEnv = {
    KOERIER_CLIENT_ID: 'dev-subscriber',
    KOERIER_CLIENT_SECRET: koerier.host.localConfig.clients['dev-subscriber']!.secret,
  };
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await cli?.remove();
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

function api(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  return callApi(koerier.url, subscriber, method, path, body);
}

/** A subscription to a receiver that answers as `answer` says, and one event published to it. */
async function deliverOneTo(answer: Parameters<typeof scripts.always>[0]): Promise<string> {
  const receiver = await startHttpsReceiver({ authority, script: scripts.always(answer) });
  receivers.push(receiver);
  const type = `nl.edu.leerling.ingeschreven.${randomUUID().slice(0, 8)}.v1`;
  const created = await api('POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
  });
  expect(created.status).toBe(201);
  await publishEvent(publisher, { source: SOURCE, type, data: { school: '99ZZ' } });
  return created.body['id'] as string;
}

interface ShownAttempt {
  readonly outcome: string;
  readonly status?: number;
  readonly answer?: { body: string; contentType?: string; truncated?: boolean; headers?: Record<string, string> };
}

async function attemptsOf(id: string): Promise<ShownAttempt[]> {
  const answer = await api('GET', `/subscriptions/${id}/deliveries?limit=100`);
  expect(answer.status).toBe(200);
  return answer.body['attempts'] as ShownAttempt[];
}

describe('a receiver answer recorded with its attempt (issue 30 item 2)', () => {
  it('SELF-2, issue 30 item 2: a 422 with a problem body is shown in the attempts, the dead letter and `koerier deliveries`', async () => {
    const id = await deliverOneTo({
      respond: 422,
      headers: {
        'content-type': 'application/problem+json',
        'set-cookie': 'sessie=geheim-cookie',
        'webhook-allowed-rate': '120',
      },
      body: PROBLEM,
    });
    const [attempt] = await eventually('the one attempt', async () => {
      const attempts = await attemptsOf(id);
      return attempts.length === 1 ? attempts : undefined;
    });
    expect(attempt).toMatchObject({
      outcome: 'dead-lettered',
      status: 422,
      answer: { body: PROBLEM, contentType: 'application/problem+json', headers: { 'webhook-allowed-rate': '120' } },
    });
    expect(JSON.stringify(attempt)).not.toContain('geheim-cookie');

    const dead = await api('GET', `/subscriptions/${id}/dead-letters`);
    const [deadLetter] = dead.body['deadLetters'] as { lastAttempts: ShownAttempt[] }[];
    expect(deadLetter!.lastAttempts.at(-1)?.answer?.body).toBe(PROBLEM);

    const shown = await cli.run(['deliveries', id], { env: cliEnv });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('answer: {"title":"Schoolcode 99ZZ is bij ons niet');
  });

  it('SELF-2, issue 30 item 2: a long HTML error page is kept to its first 2 KB, marked as cut', async () => {
    const page = `<!doctype html><title>502</title><p>${'Bad gateway. '.repeat(500)}</p>`;
    const id = await deliverOneTo({ respond: 502, headers: { 'content-type': 'text/html' }, body: page });
    const attempts = await eventually('two attempts', async () => {
      const shown = await attemptsOf(id);
      return shown.length >= 2 ? shown : undefined;
    });
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({ status: 502, answer: { contentType: 'text/html', truncated: true } });
      expect(attempt.answer!.body).toBe(page.slice(0, ANSWER_EXCERPT_BYTES));
    }
  });

  it('SELF-2, issue 30 item 2: an answer without a body is an empty excerpt', async () => {
    const id = await deliverOneTo({ respond: 204 });
    const [attempt] = await eventually('the one attempt', async () => {
      const attempts = await attemptsOf(id);
      return attempts.length === 1 ? attempts : undefined;
    });
    expect(attempt).toMatchObject({ outcome: 'delivered', status: 204, answer: { body: '' } });
  });
});
