/**
 * Issue 30 item 4, the console's self-service pages in Debian's Chromium against the laptop host:
 * a failing receiver's answer in the attempts table and the 7-day charts drawn from the attempt
 * history (docs/console.png is this page's screenshot); finding an event by type and following its
 * trace, a duplicate publication named; and a subscriber editing, pausing, resuming, validating
 * again and redriving one dead letter. Every page passes axe-core (WCAG 2.1 AA), and the Dutch
 * view holds none of the API's English outcome words. Also GET /events itself: who finds what.
 * Where Chromium is not installed the browser tests are skipped, and say so.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { ARTIFACTS, CHROMIUM, expectAccessible, signIn } from '../support/console-browser.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type ReceiverScript,
} from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

if (!CHROMIUM)
  console.warn('console browser tests skipped: no Chromium (apt-get install chromium, or set CHROMIUM_PATH)');
vi.setConfig({ testTimeout: 120_000 });

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:leerlingadministratie';
/** What the failing receiver answers: the words a partner needs on a bad day. */
const ANSWER =
  '{"title":"Niet ondersteund","detail":"Dit systeem neemt alleen application/json aan, geen cloudevents+json"}';
/** Outcome and state words of the API that must not show in the Dutch view. */
const ENGLISH_WORDS = /\b(delivered|dead-lettered|dead letters?|retrying|retired|suspended|pending|rejected|active)\b/i;

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let dir: string;
let browser: Browser | undefined;
let receiver: HttpsReceiver;
let subscriberToken: string;
let publisherToken: string;
let subscriptionId: string;
const type = `nl.edu.leerling.ingeschreven.${randomUUID().slice(0, 8)}.v1`;
const ids = [randomUUID(), randomUUID(), randomUUID()];

const api = (token: string, method: string, path: string, body?: unknown, contentType = 'application/json') =>
  callApi(koerier.url, token, method, path, body, body === undefined ? {} : { 'content-type': contentType });
const publish = (id: string) =>
  api(
    publisherToken,
    'POST',
    '/events',
    { specversion: '1.0', id, source: SOURCE, type, data: { id } },
    'application/cloudevents+json',
  );

/** The handshake answered with consent, everything else with `then`. */
const consenting =
  (then: ReturnType<ReceiverScript>): ReceiverScript =>
  (_n, request) =>
    request.method === 'OPTIONS'
      ? { respond: 200, headers: { 'webhook-allowed-origin': request.headers['webhook-request-origin'] ?? '' } }
      : then;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-console-self-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
    [settingEnv.entitlements]: JSON.stringify({ 'dev-subscriber': [{ typePrefix: '' }] }),
  });
  receiver = await startHttpsReceiver({
    authority,
    script: scripts.always({ respond: 415, headers: { 'content-type': 'application/problem+json' }, body: ANSWER }),
  });
  subscriberToken = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  publisherToken = await koerier.token('dev-publisher', ['events:publish']);
  const created = await api(subscriberToken, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
  });
  expect(created.status).toBe(201);
  subscriptionId = created.body['id'] as string;
  for (const id of ids) expect((await publish(id)).status).toBe(202);
  // The first event again: dropped as a duplicate, named in its trace.
  expect((await publish(ids[0]!)).status).toBe(202);
  await eventually('three dead letters (the target answers 415)', async () => {
    const list = await api(subscriberToken, 'GET', `/subscriptions/${subscriptionId}/dead-letters`);
    return (list.body['deadLetters'] as unknown[]).length === 3 ? true : undefined;
  });
  if (CHROMIUM) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await koerier?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * The Dutch view's own words: main's text without what the API wrote in English and the page marks
 * as English (a dead letter's detail, a status reason: `lang="en"`).
 */
function dutchText(page: Page): Promise<string> {
  return page.locator('main').evaluate((main) => {
    const english = [...main.querySelectorAll<HTMLElement>('[lang="en"]')];
    for (const element of english) element.style.display = 'none';
    const text = main.innerText;
    for (const element of english) element.style.display = '';
    return text;
  });
}

async function newPage(): Promise<Page> {
  return browser!.newPage({ locale: 'nl-NL', viewport: { width: 1280, height: 900 } });
}

describe('GET /events (issue 30 item 4)', () => {
  it('issue 30 item 4: the publisher finds its events by type and time, newest first; a client without publish grants finds none; an operator finds them; a bad time is refused', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const query = `/events?type=${encodeURIComponent(type)}&since=${encodeURIComponent(since)}`;
    const mine = await api(publisherToken, 'GET', query);
    expect(mine.status).toBe(200);
    const found = mine.body['events'] as { id: string; source: string; type: string; acceptedAt: string }[];
    // The duplicate was dropped before the archive: three events, each once.
    expect(found.map((e) => e.id).sort()).toEqual([...ids].sort());
    expect(found.every((e) => e.source === SOURCE && e.type === type && !('data' in e))).toBe(true);
    expect([...found].sort((a, b) => b.acceptedAt.localeCompare(a.acceptedAt))).toEqual(found);
    const stranger = await api(subscriberToken, 'GET', query);
    expect(stranger.status).toBe(200);
    expect(stranger.body['events']).toEqual([]);
    const operator = await api(await koerier.token('dev-subscriber', ['admin']), 'GET', query);
    expect((operator.body['events'] as unknown[]).length).toBe(3);
    const later = await api(
      publisherToken,
      'GET',
      `/events?type=${encodeURIComponent(type)}&since=2999-01-01T00:00:00Z`,
    );
    expect(later.body['events']).toEqual([]);
    const bad = await api(publisherToken, 'GET', '/events?since=yesterday');
    expect(bad.status).toBe(400);
    expect(String(bad.body['type'])).toMatch(/invalid-parameter$/);
  });
});

describe.skipIf(!CHROMIUM)('the console self-service pages in Chromium (skipped without Chromium)', () => {
  it("SELF-6, issue 30 items 2 and 4: the failing receiver's answer shows in the attempts table, the 7-day charts are drawn from the attempts, the Dutch view has no English outcome words; axe passes and docs/console.png is this page", async () => {
    const page = await newPage();
    await signIn(koerier, page, 'dev-subscriber', false);
    await page.getByRole('link', { name: subscriptionId }).click();
    await page.getByRole('heading', { level: 1, name: new RegExp(subscriptionId) }).waitFor();
    const attempts = page.getByRole('table', { name: 'Laatste pogingen' });
    await attempts.waitFor();
    const answer = attempts.locator('.answer').first();
    expect(await answer.textContent()).toContain('application/problem+json');
    expect(await answer.textContent()).toContain('Dit systeem neemt alleen application/json aan');
    // Each attempt names its event, a link to the event's trace (the column the issue found empty).
    const eventLinks = attempts.locator('a[href^="#/events/"]');
    expect(await eventLinks.count()).toBe(3);
    expect(await eventLinks.first().textContent()).toContain(type);

    const outcomes = page.locator('svg[data-chart="chart-outcomes"]');
    await outcomes.waitFor();
    const values = async (selector: string) =>
      await page.locator(selector).evaluateAll((marks) => marks.map((m) => Number(m.getAttribute('data-value'))));
    const dead = await values('svg[data-chart="chart-outcomes"] rect.series-dead-lettered');
    expect(dead.reduce((a, b) => a + b, 0)).toBe(3);
    expect(await values('svg[data-chart="chart-outcomes"] rect.series-delivered')).toEqual([]);
    const latencies = await values('svg[data-chart="chart-latency"] g.series-median circle');
    expect(latencies.length).toBeGreaterThan(0);
    expect(latencies.every((ms) => ms > 0)).toBe(true);
    expect(await page.locator('svg[data-chart="chart-outcomes"] g[data-slot] title').first().textContent()).toMatch(
      /afgeleverd: 0, mislukt: 0, onbestelbaar: [1-3]$/,
    );

    expect(await dutchText(page)).not.toMatch(ENGLISH_WORDS);
    await expectAccessible(page, '20-subscription-answer-and-charts');
    // The README's picture: the charts and the attempts table with the receiver's answers.
    const top = (await page.locator('section.charts').boundingBox())!;
    const bottom = (await attempts.boundingBox())!;
    await page.screenshot({
      path: join(ARTIFACTS, 'console.png'),
      fullPage: true,
      clip: { x: 0, y: top.y - 16, width: 1280, height: bottom.y + bottom.height - top.y + 32 },
    });
    await copyFile(join(ARTIFACTS, 'console.png'), join(process.cwd(), 'docs', 'console.png'));
    await page.close();
  });

  it('SELF-7, issue 30 items 1 and 4: an operator finds the events by type, opens one and sees its trace: accepted when, its Idempotency-Key, the duplicate publication, the subscription with its state and the answer; both pages pass axe', async () => {
    const page = await newPage();
    await signIn(koerier, page, 'dev-subscriber', true);
    await page.getByRole('link', { name: 'Gebeurtenis zoeken' }).click();
    await page.getByRole('heading', { level: 1, name: 'Gebeurtenis zoeken' }).waitFor();
    await page.getByLabel('Type (type)').fill(type);
    await page.getByRole('button', { name: 'Zoeken' }).click();
    const found = page.getByRole('table', { name: 'Gevonden gebeurtenissen, nieuwste eerst' });
    await found.waitFor();
    expect(await found.getByRole('row').count()).toBe(4);
    // The search is in the address: a reload or a shared link shows it again.
    expect(decodeURIComponent(page.url())).toContain(`type=${type}`);
    await expectAccessible(page, '21-event-search');

    await found.getByRole('link', { name: ids[0]! }).click();
    await page.getByRole('heading', { level: 1, name: 'Verloop van een gebeurtenis' }).waitFor();
    const trace = await page.locator('main').innerText();
    expect(trace).toContain('Aangenomen op');
    expect(trace).toMatch(/Idempotency-Key\s+[0-9a-f-]{36}/);
    expect(trace).toMatch(/Later nogmaals aangeboden[^\n]*\n?\s*1 ×[^\n]*Dubbel van de aanname op/);
    expect(trace).toContain(`Abonnement ${subscriptionId}`);
    expect(await page.locator(`[data-value="dead-lettered"]`).count()).toBeGreaterThan(0);
    expect(trace).toContain('Dit systeem neemt alleen application/json aan');
    expect(await dutchText(page)).not.toMatch(ENGLISH_WORDS);
    await expectAccessible(page, '22-event-trace');

    // One event straight by source and id.
    await page.goto(`${koerier.origin}/console/#/events`);
    await page.getByLabel('Bron (source)').fill(SOURCE);
    await page.getByLabel('Kenmerk van de gebeurtenis (id)').fill(ids[1]!);
    await page.getByRole('button', { name: 'Zoeken' }).click();
    await page.getByRole('heading', { level: 1, name: 'Verloop van een gebeurtenis' }).waitFor();
    expect(await page.locator('main').innerText()).toContain(ids[1]!);
    await page.close();
  });

  it('SELF-8, issue 30 item 4: a subscriber pauses and resumes, redrives one dead letter, edits the filters (a wrong one refused with its place) and validates a rejected subscription again; every page passes axe', async () => {
    const page = await newPage();
    await signIn(koerier, page, 'dev-subscriber', false);
    await page.goto(`${koerier.origin}/console/#/subscriptions/${subscriptionId}`);
    const state = () => page.locator('dd [data-value]').first().getAttribute('data-value');
    await page.getByRole('button', { name: 'Pauzeren' }).click();
    await page.getByRole('status').filter({ hasText: 'Abonnement gepauzeerd.' }).waitFor({ state: 'attached' });
    expect(await state()).toBe('suspended');
    expect(await page.locator('main').innerText()).toContain('onderbroken');
    await expectAccessible(page, '23-subscription-paused');
    await page.getByRole('button', { name: 'Hervatten' }).click();
    await page.getByRole('status').filter({ hasText: 'Abonnement hervat.' }).waitFor({ state: 'attached' });
    expect(await state()).toBe('active');

    receiver.setScript(scripts.always({ respond: 204 }));
    const before = receiver.requests.length;
    await page
      .getByRole('button', { name: /^Opnieuw aanbieden:/ })
      .first()
      .click();
    await receiver.waitForRequests(before + 1);
    await eventually('one dead letter fewer', async () => {
      const list = await api(subscriberToken, 'GET', `/subscriptions/${subscriptionId}/dead-letters`);
      return (list.body['deadLetters'] as unknown[]).length === 2 ? true : undefined;
    });
    // Only the one: no second event reached the receiver.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests.length).toBe(before + 1);

    await page.getByRole('link', { name: 'Wijzigen' }).click();
    await page.getByRole('heading', { level: 1, name: /Abonnement wijzigen/ }).waitFor();
    await expectAccessible(page, '24-subscription-edit');
    await page.getByLabel(/Filters \(JSON/).fill('[{"sql": "subject ="}]');
    await page.getByRole('button', { name: 'Opslaan' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.locator('main').innerText()).toContain('filters[0].sql');
    await expectAccessible(page, '25-subscription-edit-refused');
    await page.getByLabel(/Filters \(JSON/).fill('[{"prefix": {"subject": "leerling/"}}]');
    await page.getByRole('button', { name: 'Opslaan' }).click();
    await page.getByRole('heading', { level: 1, name: new RegExp(`^Abonnement ${subscriptionId}`) }).waitFor();
    const stored = await api(subscriberToken, 'GET', `/subscriptions/${subscriptionId}`);
    expect(stored.body['filters']).toEqual([{ prefix: { subject: 'leerling/' } }]);

    // A push subscription whose target refused the handshake, validated again once it consents.
    const handshake = await startHttpsReceiver({ authority, script: scripts.always({ respond: 405 }) });
    try {
      const rejected = await api(subscriberToken, 'POST', '/subscriptions', {
        sink: handshake.url,
        types: [type],
        validation: 'handshake',
        sinkcredential: handshake.sinkCredential,
      });
      expect(rejected.status, JSON.stringify(rejected.body)).toBe(201);
      expect(rejected.body['status']).toBe('rejected');
      await page.goto(`${koerier.origin}/console/#/subscriptions/${String(rejected.body['id'])}`);
      await page.getByRole('button', { name: 'Opnieuw valideren' }).waitFor();
      expect(await state()).toBe('rejected');
      expect(await page.locator('main').innerText()).toContain('geweigerd');
      await expectAccessible(page, '26-subscription-rejected');
      handshake.setScript(consenting({ respond: 204 }));
      await page.getByRole('button', { name: 'Opnieuw valideren' }).click();
      await page.getByRole('status').filter({ hasText: 'Validatie opnieuw verstuurd.' }).waitFor({ state: 'attached' });
      expect(await state()).toBe('active');
    } finally {
      await handshake.close();
    }
    await page.close();
  });
});
