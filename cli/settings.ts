/**
 * Where the CLI's settings come from, in this order: a flag, the environment (`KOERIER_URL`,
 * `KOERIER_TOKEN_URL`, `KOERIER_CLIENT_ID`, `KOERIER_CLIENT_SECRET`), a named profile
 * (`--profile`, `KOERIER_PROFILE`, else `default`; written by `koerier login`). The client secret
 * is never a command-line argument (it would show in `ps` and the shell history): it comes from
 * `--client-secret-file` (a file, or `-` for stdin), `KOERIER_CLIENT_SECRET`, or what `login` stored.
 */
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { ConfigStore, configDirectory, type Profile } from './config-store.js';
import { CliError, exitCodes } from './exit-codes.js';

/** The options every command takes (commander's `optsWithGlobals()`). */
export interface GlobalOptions {
  readonly url?: string;
  readonly tokenUrl?: string;
  readonly clientId?: string;
  readonly clientSecretFile?: string;
  readonly profile?: string;
  readonly scope?: string;
  readonly json?: boolean;
  readonly retries?: number;
}

export interface Settings {
  readonly url: string | undefined;
  readonly tokenUrl: string | undefined;
  readonly clientId: string | undefined;
  /** From `--client-secret-file` or `KOERIER_CLIENT_SECRET`; the stored one is read only when needed. */
  readonly secret: string | undefined;
  /** The scopes to ask for (least privilege: a job that only publishes contracts); undefined: whatever the client has. */
  readonly scope: string | undefined;
  readonly profileName: string;
  readonly profile: Profile;
  /**
   * Whether `url` is the gateway the profile was logged in to (its `url`, however the URL is
   * written): only then may its stored secret, and the tokens cached with it, be used.
   */
  readonly profileGateway: boolean;
  /** Whether the token URL was given (`--token-url`, `KOERIER_TOKEN_URL`) rather than pinned by `login` or found from the gateway. */
  readonly tokenUrlGiven: boolean;
  readonly store: ConfigStore;
  readonly json: boolean;
  readonly retries: number;
}

export async function resolveSettings(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  { forLogin = false } = {},
): Promise<Settings> {
  const store = new ConfigStore(configDirectory(env));
  const profileName = options.profile ?? env['KOERIER_PROFILE'] ?? 'default';
  const profile = (await store.profile(profileName)) ?? {};
  // A profile named but never made is a typo, except for `login`, which makes it.
  if (
    !forLogin &&
    (options.profile || env['KOERIER_PROFILE']) &&
    profileName !== 'default' &&
    !(await store.profile(profileName))
  ) {
    throw new CliError(
      `no profile "${profileName}" in ${store.dir}/config.json (koerier login --profile ${profileName} makes one)`,
      exitCodes.usage,
    );
  }
  const pick = (flag: string | undefined, name: string, stored: string | undefined) =>
    flag ?? (env[name] || undefined) ?? stored;
  const url = pick(options.url, 'KOERIER_URL', profile.url);
  const profileGateway = profile.url !== undefined && url !== undefined && sameGateway(url, profile.url);
  const givenTokenUrl = options.tokenUrl ?? (env['KOERIER_TOKEN_URL'] || undefined);
  return {
    url,
    // Pinned at login: the profile's gateway is never asked again where to send the secret (issue 28
    // item 10). Another gateway finds its own, and gets no stored secret (cli/tokens.ts).
    tokenUrl: givenTokenUrl ?? (profileGateway ? profile.tokenUrl : undefined),
    clientId: pick(options.clientId, 'KOERIER_CLIENT_ID', profile.clientId),
    secret:
      options.clientSecretFile !== undefined
        ? await readSecretFile(options.clientSecretFile)
        : env['KOERIER_CLIENT_SECRET'] || undefined,
    scope:
      (options.scope ?? (env['KOERIER_SCOPE'] || undefined))?.trim().split(/\s+/).filter(Boolean).join(' ') ||
      undefined,
    profileName,
    profile,
    profileGateway,
    tokenUrlGiven: givenTokenUrl !== undefined,
    store,
    json: options.json === true,
    retries: options.retries ?? 5,
  };
}

/** The gateway URL, or a usage error saying how to give one. */
export function gatewayUrl(settings: Settings): string {
  if (!settings.url)
    throw new CliError('no gateway URL: give --url, set KOERIER_URL, or run koerier login --url …', exitCodes.usage);
  const normalized = normalizedUrl(settings.url);
  if (normalized === undefined) throw new CliError(`the gateway URL "${settings.url}" is not a URL`, exitCodes.usage);
  const hint = versionPathHint(normalized);
  if (hint && !warnedAbout.has(normalized)) {
    warnedAbout.add(normalized);
    process.stderr.write(`warning: ${hint}\n`);
  }
  return normalized;
}

const warnedAbout = new Set<string>();

/**
 * The API lives under its major version only (`https://…/v1`, the stack output ApiUrl): a gateway
 * URL without it answers 404 to every call, which reads as "no such subscription" (issue 30 item 5).
 */
export function versionPathHint(url: string): string | undefined {
  const { pathname } = new URL(url);
  if (/\/v\d+\/?$/.test(pathname)) return undefined;
  return `the gateway URL ${url} has no version path: the API is at ${url.replace(/\/+$/, '')}/v1 (the stack output ApiUrl), and every call without it answers 404`;
}

function normalizedUrl(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).toString().replace(/\/+$/, '') : undefined;
}

/** One gateway however its URL is written (`HTTP://Host:443/v1/` is `http://host:443/v1`). */
function sameGateway(a: string, b: string): boolean {
  const left = normalizedUrl(a);
  return left !== undefined && left === normalizedUrl(b);
}

async function readSecretFile(path: string): Promise<string> {
  try {
    const content = path === '-' ? await text(process.stdin) : await readFile(path, 'utf8');
    const secret = content.trim();
    if (!secret) throw new CliError(`the client secret file ${path} is empty`, exitCodes.usage);
    return secret;
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read the client secret file ${path}: ${(error as Error).message}`, exitCodes.usage);
  }
}
