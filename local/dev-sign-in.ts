/**
 * Sign-in to the console on the laptop: the authorization code grant with PKCE (RFC 6749 §4.1,
 * RFC 7636, S256 only), as the organisation's OpenID Connect provider offers it in AWS, so the
 * console runs the same code in both places. The "user" is one of the development clients of
 * `koerier.local.json`: the sign-in page lets the developer pick one, and choose whether to act
 * as its operator (the `admin` scope) or as a plain subscriber.
 *
 * Only the console may use it: the one public client id `koerier-console`, with its redirect URI
 * fixed to the host's own `/console/` (no open redirect). Codes live a minute, in memory, and are
 * good once. Development only: never deployed.
 *
 * Every sign-in asks for the sign-in code of this start (issue 28, item 14b): without it any process
 * that reaches the loopback port, or any web page that makes the browser post to it, could take a
 * development client's tokens, the operator's `admin` scope included. `npm start` prints the code and
 * the host writes it to a file only the user can read; it is new at every start.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { HttpRequest, HttpResponse } from '../functions/core/http/messages.js';
import { mediaTypeOf } from '../functions/core/http/messages.js';
import type { DevClientConfig } from './local-config-file.js';

export const CONSOLE_CLIENT_ID = 'koerier-console';
const CODE_LIFETIME_MS = 60_000;
/** Crockford's base32: no I, L, O or U to misread when typed from a terminal. */
const SIGN_IN_CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A new sign-in code, `XXXX-XXXX-XXXX`: 60 random bits, too many to guess at any rate a port answers. */
export function newSignInCode(): string {
  const characters = [...randomBytes(12)].map((byte) => SIGN_IN_CODE_ALPHABET[byte & 31]).join('');
  return characters.match(/.{4}/g)!.join('-');
}

/** As typed: any case, with or without the dashes or spaces. */
function normalizedSignInCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

interface PendingCode {
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly codeChallenge: string;
  readonly redirectUri: string;
  readonly expiresAt: number;
}

export interface DevSignIn {
  /** `GET /oauth/authorize`: the sign-in page. */
  authorizePage(request: HttpRequest): HttpResponse;
  /** `POST /oauth/authorize`: the page's form; redirects back to the console with a code. */
  authorize(request: HttpRequest): HttpResponse;
  /** The `authorization_code` grant of `POST /oauth/token`: the client and scopes, or an OAuth error. */
  exchange(form: URLSearchParams): { clientId: string; scopes: string[] } | { error: string; description: string };
}

export function createDevSignIn(options: {
  consoleUrl: string;
  clients: Readonly<Record<string, DevClientConfig>>;
  /** What the sign-in form must be given (`newSignInCode()`), shown to the user who started the host. */
  signInCode: string;
  now?: () => number;
}): DevSignIn {
  const now = options.now ?? Date.now;
  const clientIds = Object.keys(options.clients);
  const codes = new Map<string, PendingCode>();
  const redirectUri = options.consoleUrl;

  /** The request's parameters, checked: a bad client or redirect is shown, never redirected to (RFC 6749 §4.1.2.1). */
  const checkParameters = (
    params: URLSearchParams,
  ): { state: string; codeChallenge: string; requested: string[] } | { page: HttpResponse } => {
    if (params.get('client_id') !== CONSOLE_CLIENT_ID)
      return { page: errorPage(`Unknown client. Only ${CONSOLE_CLIENT_ID} signs in here.`) };
    if (params.get('redirect_uri') !== redirectUri)
      return { page: errorPage(`The redirect URI must be ${redirectUri}.`) };
    if (params.get('response_type') !== 'code') return { page: errorPage('response_type must be "code".') };
    const codeChallenge = params.get('code_challenge') ?? '';
    if (params.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) {
      return { page: errorPage('PKCE is required: code_challenge_method S256 and a 43-character code_challenge.') };
    }
    return {
      state: params.get('state') ?? '',
      codeChallenge,
      requested: (params.get('scope') ?? '').split(' ').filter(Boolean),
    };
  };

  return {
    authorizePage(request) {
      const params = new URLSearchParams(request.query);
      const checked = checkParameters(params);
      if ('page' in checked) return checked.page;
      return htmlPage(200, SIGN_IN_TITLE, signInForm(params, clientIds));
    },

    authorize(request) {
      if (mediaTypeOf(request.headers['content-type']) !== 'application/x-www-form-urlencoded')
        return errorPage('The form must be application/x-www-form-urlencoded.');
      const form = new URLSearchParams(request.body.toString('utf8'));
      const checked = checkParameters(form);
      if ('page' in checked) return checked.page;
      if (!sameText(normalizedSignInCode(form.get('sign_in_code') ?? ''), normalizedSignInCode(options.signInCode))) {
        return htmlPage(400, SIGN_IN_TITLE, signInForm(form, clientIds, 'wrong-code'));
      }
      const clientId = form.get('user') ?? '';
      // Own properties only: `__proto__` or `constructor` is no client (issue 28, item 14b).
      const client = Object.hasOwn(options.clients, clientId) ? options.clients[clientId] : undefined;
      if (!client) return errorPage('Choose one of the development clients.');
      const wanted = checked.requested.filter((scope) => scope !== 'admin' || form.get('operator') === 'on');
      const scopes = client.scopes.filter((scope) => wanted.includes(scope));
      for (const [code, pending] of codes) if (pending.expiresAt <= now()) codes.delete(code);
      const code = randomBytes(24).toString('base64url');
      codes.set(code, {
        clientId,
        scopes,
        codeChallenge: checked.codeChallenge,
        redirectUri,
        expiresAt: now() + CODE_LIFETIME_MS,
      });
      const target = new URL(redirectUri);
      target.searchParams.set('code', code);
      if (checked.state) target.searchParams.set('state', checked.state);
      return { status: 303, headers: { location: target.toString(), 'cache-control': 'no-store' }, body: '' };
    },

    exchange(form) {
      const code = form.get('code') ?? '';
      const pending = codes.get(code);
      // Good once, whatever happens next (RFC 6749 §4.1.2).
      codes.delete(code);
      if (!pending || pending.expiresAt <= now())
        return { error: 'invalid_grant', description: 'The code is unknown, used or expired.' };
      if (form.get('client_id') !== CONSOLE_CLIENT_ID)
        return { error: 'invalid_client', description: `The code was issued to ${CONSOLE_CLIENT_ID}.` };
      if (form.get('redirect_uri') !== pending.redirectUri)
        return { error: 'invalid_grant', description: 'redirect_uri differs from the authorization request.' };
      const verifier = form.get('code_verifier') ?? '';
      if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !sameText(s256(verifier), pending.codeChallenge)) {
        return { error: 'invalid_grant', description: 'The code_verifier does not match the code_challenge.' };
      }
      return { clientId: pending.clientId, scopes: [...pending.scopes] };
    },
  };
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

const SIGN_IN_TITLE = 'Aanmelden — Koerier (ontwikkelomgeving)';

function signInForm(params: URLSearchParams, clientIds: readonly string[], problem?: 'wrong-code'): string {
  const hidden = [
    'client_id',
    'redirect_uri',
    'response_type',
    'code_challenge',
    'code_challenge_method',
    'state',
    'scope',
  ]
    .map((name) => `<input type="hidden" name="${name}" value="${escapeHtml(params.get(name) ?? '')}">`)
    .join('');
  const chosen = clientIds.includes(params.get('user') ?? '') ? params.get('user') : clientIds[0];
  const choices = clientIds
    .map(
      (id, index) =>
        `<div><input type="radio" id="user-${index}" name="user" value="${escapeHtml(id)}"${id === chosen ? ' checked' : ''}> <label for="user-${index}">${escapeHtml(id)}</label></div>`,
    )
    .join('');
  const wrong = problem === 'wrong-code';
  const error = wrong
    ? `<p id="sign-in-code-error" role="alert"><strong>De aanmeldcode klopt niet. <span lang="en">The sign-in code is wrong.</span></strong></p>`
    : '';
  return `<h1>Aanmelden bij Koerier <span lang="en">(sign in)</span></h1>
<p>Ontwikkelomgeving: kies de partner als wie u de console gebruikt. <span lang="en">Development identity: choose the partner to act as.</span></p>
<form method="post" action="/oauth/authorize">${hidden}
<fieldset><legend>Partner</legend>${choices}</fieldset>
<div><input type="checkbox" id="operator" name="operator"${params.get('operator') === 'on' ? ' checked' : ''}> <label for="operator">Als beheerder (scope admin) <span lang="en">— as operator</span></label></div>
<div class="code"><label for="sign-in-code">Aanmeldcode <span lang="en">(sign-in code)</span></label>
<p id="sign-in-code-hint">Getoond door <code>npm start</code>, en te lezen in <code>.koerier/console-sign-in-code</code>; nieuw bij elke start. <span lang="en">Shown by npm start and kept in .koerier/console-sign-in-code; new at every start.</span></p>${error}
<input type="text" id="sign-in-code" name="sign_in_code" required autocomplete="off" autocapitalize="characters" spellcheck="false" aria-describedby="sign-in-code-hint${wrong ? ' sign-in-code-error' : ''}"${wrong ? ' aria-invalid="true" autofocus' : ''}></div>
<button type="submit">Aanmelden <span lang="en">/ Sign in</span></button>
</form>`;
}

function errorPage(message: string): HttpResponse {
  return htmlPage(
    400,
    'Aanmelden mislukt — Koerier',
    `<h1>Aanmelden mislukt <span lang="en">(sign-in failed)</span></h1><p>${escapeHtml(message)}</p>`,
  );
}

function htmlPage(status: number, title: string, main: string): HttpResponse {
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    },
    body: `<!doctype html><html lang="nl"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font:1rem/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}button{font:inherit;padding:.5rem 1rem;margin-top:1rem;background:#154273;color:#fff;border:0;border-radius:4px}fieldset{margin:1rem 0}.code{margin-top:1.5rem}.code label{font-weight:600}[role=alert]{color:#a4262c}.code p{margin:.25rem 0 .5rem}.code input{font:1.25rem/1.5 ui-monospace,monospace;padding:.25rem .5rem;letter-spacing:.1em}</style>
</head><body><main>${main}</main></body></html>`,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
