/**
 * The console on the laptop, at `<host>/console/`: the same files the stack puts behind
 * CloudFront (console/index.html, console.css, and console/src bundled by esbuild into
 * console.js), plus a `config.json` that points it at this host's API and development identity.
 * Bundled once, on the first request, so a host that nobody opens the console on pays nothing.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { HttpResponse } from '../functions/core/http/messages.js';
import type { LocalRoute } from './api-gateway.js';
import { CONSOLE_SCOPES } from '../functions/core/auth/access-tokens.js';
import { CONSOLE_CLIENT_ID } from './dev-sign-in.js';
import { API_BASE_PATH } from '../functions/config/resources.js';

const CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));
/** What the console may load: its own files, and calls to this host's API. No inline script. */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'";

export function consolePath(): string {
  return '/console/';
}

/** esbuild is a development dependency: the laptop host runs from a clone, where it is installed. */
export async function bundleConsole(): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [`${CONSOLE_DIR}src/main.ts`],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export function consoleRoutes(hostUrl: string): LocalRoute[] {
  let bundle: Promise<string> | undefined;
  const file = (name: string) => readFile(`${CONSOLE_DIR}${name}`, 'utf8');
  const asset = (body: string, contentType: string): HttpResponse => ({
    status: 200,
    headers: {
      'content-type': contentType,
      'cache-control': 'no-cache',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
    },
    body,
  });
  const config = {
    // The API under its major version; sign-in and the console itself at the origin.
    apiUrl: `${hostUrl}${API_BASE_PATH}`,
    clientId: CONSOLE_CLIENT_ID,
    scope: CONSOLE_SCOPES.join(' '),
    authorizationEndpoint: `${hostUrl}/oauth/authorize`,
    tokenEndpoint: `${hostUrl}/oauth/token`,
  };
  return [
    {
      method: 'GET',
      path: '/console',
      handle: async () => ({ status: 301, headers: { location: consolePath() }, body: '' }),
    },
    {
      method: 'GET',
      path: '/console/',
      handle: async () => asset(await file('index.html'), 'text/html; charset=utf-8'),
    },
    {
      method: 'GET',
      path: '/console/console.css',
      handle: async () => asset(await file('console.css'), 'text/css; charset=utf-8'),
    },
    {
      method: 'GET',
      path: '/console/console.js',
      handle: async () => {
        bundle ??= bundleConsole();
        return asset(await bundle, 'text/javascript; charset=utf-8');
      },
    },
    {
      method: 'GET',
      path: '/console/config.json',
      handle: async () => asset(JSON.stringify(config), 'application/json'),
    },
  ];
}
