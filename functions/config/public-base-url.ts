/**
 * KOERIER_PUBLIC_BASE_URL (issue 31, item 1): the base every link Koerier hands out is built on
 * (`dataref`, validation callbacks, contract links, operational events' `source`, the API
 * description's `servers`). The CDK stack sets it from `koerier:publicDomain` (else the
 * execute-api URL); on the laptop the host's own URL, or the shell's KOERIER_PUBLIC_BASE_URL when
 * the host is reached through another name (a tunnel, a reverse proxy).
 *
 * It is the API's base URL with its major version, `https://koerier.example.org/v1`; an origin
 * alone is read as the API served under `API_BASE_PATH` there, since that is where it is served.
 */
import { API_BASE_PATH } from './resources.js';
import { settingEnv } from './setting-names.js';
import { SettingsReader } from './settings-reader.js';

/** The base URL without a trailing slash, or '' when unset (links are then not offered, or relative). */
export function readPublicBaseUrl(settings: SettingsReader): string {
  const raw = settings.text(settingEnv.publicBaseUrl);
  if (raw === undefined) return '';
  const problem = (what: string) => {
    settings.issues.push(
      `${settingEnv.publicBaseUrl} must be ${what}, e.g. https://koerier.example.org${API_BASE_PATH}, got ${JSON.stringify(raw)}`,
    );
    return '';
  };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return problem('an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return problem('an http or https URL');
  // Links are made by appending paths: a query or fragment would end up in the middle of every one.
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    return problem('a URL without query, fragment or credentials');
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '') return `${url.origin}${API_BASE_PATH}`;
  if (!path.endsWith(API_BASE_PATH)) return problem(`the API's URL, ending in its major version ${API_BASE_PATH}`);
  return `${url.origin}${path}`;
}

/**
 * The root a public base URL's API is served under (`https://koerier.example.org` of
 * `https://koerier.example.org/v1`), where the laptop host's own resources sit beside the API (its
 * token endpoint); undefined when `value` is unset or not a valid base URL (loadConfig reports it).
 */
export function publicRootOf(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const reader = new SettingsReader({ [settingEnv.publicBaseUrl]: value });
  const base = readPublicBaseUrl(reader);
  return reader.issues.length > 0 ? undefined : base.slice(0, -API_BASE_PATH.length);
}
