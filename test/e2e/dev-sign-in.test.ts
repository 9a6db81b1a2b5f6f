/**
 * The laptop's console sign-in (local/dev-sign-in.ts) as any local process reaches it, over HTTP
 * without a browser (issue 28, item 14b): it hands out no authorization code — so no token, the
 * operator's `admin` scope least of all — without the sign-in code of this start, and a `user` that
 * names an Object property (`__proto__`, `constructor`) is a 400, never a 500. The browser flow
 * with the code typed in is test/e2e/console.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host.js';

const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

let koerier: TestHost;
let request: Record<string, string>;

beforeAll(async () => {
  koerier = await startTestHost();
  request = {
    client_id: 'koerier-console',
    redirect_uri: `${koerier.origin}/console/`,
    response_type: 'code',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 's1',
    scope: 'subscriptions:manage admin',
  };
});
afterAll(async () => {
  await koerier?.stop();
});

/** The sign-in page's form, posted as a browser (or any process) would, the redirect not followed. */
const signIn = (fields: Record<string, string>) =>
  fetch(`${koerier.origin}/oauth/authorize`, {
    method: 'POST',
    body: new URLSearchParams({ ...request, operator: 'on', ...fields }),
    redirect: 'manual',
  });

/** The code a 303 carries, exchanged at the token endpoint as the console does: the token's scopes. */
async function scopesOf(answer: Response): Promise<string[]> {
  expect(answer.status).toBe(303);
  const code = new URL(answer.headers.get('location') ?? '').searchParams.get('code') ?? '';
  const exchanged = await fetch(`${koerier.origin}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: 'koerier-console',
      redirect_uri: request['redirect_uri']!,
      code,
      code_verifier: VERIFIER,
    }),
  });
  expect(exchanged.status, await exchanged.clone().text()).toBe(200);
  return ((await exchanged.json()) as { scope: string }).scope.split(' ');
}

describe("the laptop's console sign-in (issue 28, item 14b)", () => {
  it('EDU-2, issue 28 item 14b: no code, and so no admin token, without the sign-in code of this start; with it (as typed, any case, dashes or not) the operator signs in', async () => {
    for (const fields of [
      {},
      { sign_in_code: '' },
      { sign_in_code: 'AAAA-BBBB-CCCC' },
      { sign_in_code: `${koerier.host.signInCode}X` },
    ]) {
      const refused = await signIn({ user: 'dev-publisher', ...fields });
      expect(refused.status, JSON.stringify(fields)).toBe(400);
      expect(refused.headers.get('location')).toBeNull();
      const page = await refused.text();
      expect(page).toContain('De aanmeldcode klopt niet');
      // The form comes back to be tried again, the choices kept and the code's field marked.
      expect(page).toMatch(/name="user" value="dev-publisher" checked/);
      expect(page).toMatch(/id="sign-in-code"[^>]*aria-invalid="true"/);
    }
    expect(await scopesOf(await signIn({ user: 'dev-publisher', sign_in_code: koerier.host.signInCode }))).toEqual(
      expect.arrayContaining(['admin', 'subscriptions:manage']),
    );
    const typed = koerier.host.signInCode.toLowerCase().replace(/-/g, ' ');
    expect(await scopesOf(await signIn({ user: 'dev-subscriber', sign_in_code: typed }))).toContain('admin');

    // The page asks for it; the code is kept for the user alone, as npm start says.
    const page = await (await fetch(`${koerier.origin}/oauth/authorize?${new URLSearchParams(request)}`)).text();
    expect(page).toMatch(/<label for="sign-in-code">Aanmeldcode/);
    expect(page).not.toContain(koerier.host.signInCode);
    expect(koerier.host.signInCode).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    expect((await readFile(koerier.host.signInCodeFile, 'utf8')).trim()).toBe(koerier.host.signInCode);
    expect((await stat(koerier.host.signInCodeFile)).mode & 0o777).toBe(0o600);
  });

  it('EDU-2, issue 28 item 14b: a user named after an Object property (__proto__, constructor, …) is a 400 naming the rule, never a 500, and gets no code', async () => {
    for (const user of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'dev-nobody']) {
      const refused = await signIn({ user, sign_in_code: koerier.host.signInCode });
      expect(refused.status, user).toBe(400);
      expect(refused.headers.get('location'), user).toBeNull();
      expect(await refused.text(), user).toContain('Choose one of the development clients.');
    }
    // The token endpoint takes no such client either.
    for (const client of ['__proto__', 'constructor']) {
      const token = await fetch(`${koerier.origin}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: client,
          client_secret: 'x'.repeat(16),
        }),
      });
      expect(token.status, client).toBe(401);
      expect(((await token.json()) as { error: string }).error).toBe('invalid_client');
    }
  });
});
