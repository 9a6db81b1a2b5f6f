/**
 * The console (issue 16) in a real headless browser: Debian's Chromium driven by playwright-core,
 * against the laptop host, signing in through the development identity (authorization code +
 * PKCE), with axe-core checking every page against WCAG 2.1 AA. Screenshots of each page go to
 * test-artifacts/console/. Where Chromium is not installed the tests are skipped, and say so.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { CHROMIUM, expectAccessible, signIn as signInAs } from '../support/console-browser.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

if (!CHROMIUM)
  console.warn('console browser tests skipped: no Chromium (apt-get install chromium, or set CHROMIUM_PATH)');

// A browser and an axe run per page: on two loaded cores a walk through the console takes most of a minute.
vi.setConfig({ testTimeout: 90_000 });

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let dir: string;
let browser: Browser;
let receiver: HttpsReceiver;
let ownId: string;
let othersId: string;
let consoleType: string;

const api = (token: string, method: string, path: string, body?: unknown, contentType = 'application/json') =>
  callApi(koerier.url, token, method, path, body, body === undefined ? {} : { 'content-type': contentType });

const signIn = (page: Page, client: string, operator: boolean) => signInAs(koerier, page, client, operator);

describe.skipIf(!CHROMIUM)('console in Chromium (skipped without Chromium)', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'koerier-console-'));
    await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
    koerier = await startTestHost({
      [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
      [settingEnv.validationAgreedClients]: 'dev-subscriber,dev-publisher',
      [settingEnv.entitlements]: JSON.stringify({
        'dev-subscriber': [{ typePrefix: '' }],
        'dev-publisher': [{ typePrefix: '' }],
      }),
    });
    receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 415 }) });
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    const other = await koerier.token('dev-publisher', ['subscriptions:manage', 'events:publish']);
    const type = `nl.example.console.${randomUUID().slice(0, 8)}.v1`;
    consoleType = type;
    const own = await api(subscriber, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
    });
    expect(own.status).toBe(201);
    ownId = own.body['id'] as string;
    const others = await api(other, 'POST', '/subscriptions', { delivery: 'pull', types: [`${type}.other`] });
    expect(others.status).toBe(201);
    othersId = others.body['id'] as string;
    for (let i = 0; i < 2; i++) {
      const event = {
        specversion: '1.0',
        id: randomUUID(),
        source: 'urn:nld:oin:00000001234567890000:systeem:console',
        type,
        data: { n: i },
      };
      const published = await api(other, 'POST', '/events', event, 'application/cloudevents+json');
      expect(published.status).toBe(202);
    }
    await eventually('both events dead-lettered (the target answers 415)', async () => {
      const list = await api(subscriber, 'GET', `/subscriptions/${ownId}/dead-letters`);
      return (list.body['deadLetters'] as unknown[]).length === 2 ? true : undefined;
    });
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await koerier?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('issue 16: signs in on the laptop with PKCE, sees the failing subscription, redrives its dead letters and sees them delivered; every page passes axe (WCAG 2.1 AA)', async () => {
    const page = await browser.newPage({ locale: 'nl-NL' });
    await page.goto(`${koerier.origin}/console/`);
    await expectAccessible(page, '01-welcome');
    await page.getByRole('button', { name: 'Aanmelden' }).click();
    await page.waitForURL(/\/oauth\/authorize/);
    await expectAccessible(page, '02-sign-in');
    await page.getByLabel('dev-subscriber', { exact: true }).check();
    // Issue 28, item 14b: a wrong sign-in code brings the form back, marked, and signs no one in.
    await page.getByLabel(/Aanmeldcode/).fill('AAAA-BBBB-CCCC');
    await page.getByRole('button', { name: /Aanmelden/ }).click();
    await page.getByRole('alert').filter({ hasText: 'De aanmeldcode klopt niet' }).waitFor();
    await expectAccessible(page, '02-sign-in-wrong-code');
    await page.getByLabel(/Aanmeldcode/).fill(koerier.host.signInCode);
    await page.getByRole('button', { name: /Aanmelden/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Abonnementen' }).waitFor();
    // The code and state are gone from the address bar; the token never was in it.
    expect(page.url()).toBe(`${koerier.origin}/console/`);
    await expectAccessible(page, '03-subscriptions');

    await page.getByRole('link', { name: ownId }).click();
    await page.getByRole('heading', { level: 1, name: new RegExp(ownId) }).waitFor();
    // Issue 30 item 4: the Dutch view says "onbestelbaar", the postal term, where the API says dead-lettered.
    const deadLetters = page.getByRole('table', { name: 'Onbestelbare berichten' });
    await expect.poll(() => deadLetters.getByRole('row').count()).toBe(3);
    expect(await deadLetters.textContent()).toContain('inhoudstype niet ondersteund (415)');
    expect(await deadLetters.locator('[data-value="unsupported-media-type"]').count()).toBe(2);
    expect(await page.getByRole('table', { name: 'Laatste pogingen' }).textContent()).toContain('onbestelbaar');
    await expectAccessible(page, '04-subscription-failing');

    receiver.setScript(scripts.always({ respond: 202 }));
    const before = receiver.requests.length;
    await page.getByRole('button', { name: 'Alles opnieuw aanbieden' }).click();
    await receiver.waitForRequests(before + 2);
    await page.getByRole('status').filter({ hasText: 'Opnieuw aangeboden' }).waitFor({ state: 'attached' });
    await eventually('the redriven deliveries shown as delivered', async () => {
      await page.reload();
      const attempts = page.getByRole('table', { name: 'Laatste pogingen' });
      await attempts.waitFor();
      return (await attempts.getByText('afgeleverd', { exact: true }).count()) === 2 ? true : undefined;
    });
    expect(await page.getByRole('heading', { name: 'Onbestelbare berichten' }).count()).toBe(1);
    expect(await page.getByRole('table', { name: 'Onbestelbare berichten' }).count()).toBe(0);
    await expectAccessible(page, '05-subscription-redriven');

    await page.getByRole('link', { name: 'Contracten' }).click();
    await page.getByRole('heading', { level: 1, name: 'Contracten' }).waitFor();
    await expectAccessible(page, '06-contracts');

    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { level: 1, name: 'Contracts' }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await page.getByRole('link', { name: 'Subscriptions' }).click();
    await page.getByRole('heading', { level: 1, name: 'Subscriptions' }).waitFor();
    await expectAccessible(page, '07-subscriptions-english');
    await page.close();
  });

  it("issue 16: a subscriber sees only its own subscriptions, and another's is not found; an operator (admin) sees both", async () => {
    const page = await browser.newPage({ locale: 'nl-NL' });
    await signIn(page, 'dev-subscriber', false);
    const listed = await page.locator('main').textContent();
    expect(listed).toContain(ownId);
    expect(listed).not.toContain(othersId);
    await page.goto(`${koerier.origin}/console/#/subscriptions/${othersId}`);
    await page.getByText(/Niet gevonden|Not found/).waitFor();
    await expectAccessible(page, '08-not-yours');
    await page.close();

    const operator = await browser.newPage({ locale: 'nl-NL' });
    await signIn(operator, 'dev-subscriber', true);
    await operator
      .getByText(/beheerder|operator/)
      .first()
      .waitFor();
    const all = await operator.locator('main').textContent();
    expect(all).toContain(ownId);
    expect(all).toContain(othersId);
    await expectAccessible(operator, '09-operator');
    await operator.close();
  });

  it('CESQL-7, issue 32 (filter test): a subscriber pastes filters and sees which of the newest archived events match; an invalid sql filter shows the position; both pass axe', async () => {
    const page = await browser.newPage({ locale: 'nl-NL' });
    await signIn(page, 'dev-subscriber', false);
    await page.getByRole('link', { name: 'Filter uitproberen' }).click();
    await page.getByRole('heading', { level: 1, name: 'Filter uitproberen' }).waitFor();
    await expectAccessible(page, '10-filter-test');

    await page.getByLabel(/Filters \(JSON/).fill(JSON.stringify([{ sql: `type = '${consoleType}'` }]));
    await page.getByLabel(/laatste gearchiveerde/).fill('20');
    await page.getByRole('button', { name: 'Uitproberen' }).click();
    const events = page.getByRole('table', { name: 'Gearchiveerde gebeurtenissen, nieuwste eerst' });
    await events.waitFor();
    // The two events published in beforeAll match; nothing else of the archive does.
    const rows = events.getByRole('row');
    const matching = rows.filter({ hasText: consoleType }).filter({ hasText: 'ja' });
    expect(await matching.count()).toBe(2);
    expect(await page.locator('main').textContent()).toMatch(/2 van \d+ gebeurtenissen passen/);
    await expectAccessible(page, '11-filter-test-result');

    await page.getByLabel(/Filters \(JSON/).fill('[{"sql": "type = \'a\' OR type = \'b\' AND x"}]');
    await page.getByRole('button', { name: 'Uitproberen' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.locator('main').textContent()).toContain('filters[0].sql');
    expect(await page.locator('main').textContent()).toContain('at position 26: expected OR or parentheses');
    await expectAccessible(page, '12-filter-test-invalid');
    await page.close();
  });

  it('issue 16: the development sign-in refuses a wrong PKCE verifier, a reused code and a foreign redirect URI', async () => {
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'; // RFC 7636 appendix B
    const verifier = 'dBjftJeZ4CVP-mJ92K1ZyhoLCv5Q2N-SYcyt3gqgRmDM';
    const request = {
      client_id: 'koerier-console',
      redirect_uri: `${koerier.origin}/console/`,
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's1',
      scope: 'subscriptions:manage',
    };
    // The sign-in page's form, posted as the browser would, without following the redirect.
    const signedIn = await fetch(`${koerier.origin}/oauth/authorize`, {
      method: 'POST',
      body: new URLSearchParams({ ...request, user: 'dev-subscriber', sign_in_code: koerier.host.signInCode }),
      redirect: 'manual',
    });
    expect(signedIn.status).toBe(303);
    const back = new URL(signedIn.headers.get('location') ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(`${koerier.origin}/console/`);
    expect(back.searchParams.get('state')).toBe('s1');
    const code = back.searchParams.get('code') ?? '';
    const exchange = (form: Record<string, string>) =>
      fetch(`${koerier.origin}/oauth/token`, { method: 'POST', body: new URLSearchParams(form) });
    const base = {
      grant_type: 'authorization_code',
      client_id: 'koerier-console',
      redirect_uri: `${koerier.origin}/console/`,
    };
    const wrong = await exchange({ ...base, code, code_verifier: verifier.replace(/^d/, 'e') });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toBe('invalid_grant');
    // Good once: the failed try used it up.
    const reused = await exchange({ ...base, code, code_verifier: verifier });
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');

    const foreign = new URL(`${koerier.origin}/oauth/authorize`);
    for (const [name, value] of Object.entries({ ...request, redirect_uri: 'https://attacker.example/console/' }))
      foreign.searchParams.set(name, value);
    const refused = await fetch(foreign, { redirect: 'manual' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).not.toContain('<form');
    const forged = await fetch(`${koerier.origin}/oauth/authorize`, {
      method: 'POST',
      body: new URLSearchParams({
        ...request,
        redirect_uri: 'https://attacker.example/console/',
        user: 'dev-subscriber',
        sign_in_code: koerier.host.signInCode,
      }),
      redirect: 'manual',
    });
    expect(forged.status).toBe(400);
    expect(forged.headers.get('location')).toBeNull();
  });
});
