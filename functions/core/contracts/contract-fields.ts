/**
 * The members of contract metadata as a request gives them (EDU-22): description, owner and
 * contact point. Issue 28, item 6: each length is checked before any pattern runs (the e-mail
 * pattern backtracks quadratically in the length); item 14: no control characters, which another
 * tenant's terminal would run as escape sequences when the CLI shows the contract.
 */
import { KoerierError, problems, type ValidationIssue } from '../http/problems.js';
import type { ContactPoint } from './contract.js';

export const MAX_TEXT = 1024;
/** RFC 5321's limit on a path, less its angle brackets. */
export const MAX_EMAIL = 254;

export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export function textOf(value: unknown, member: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > MAX_TEXT)
    throw invalidContract(`${member} is a string of at most ${MAX_TEXT} characters.`);
  withoutControlCharacters(value, member, true);
  return value;
}

/** EDU-22: a name, and an e-mail address or a URL to reach them. */
export function contactOf(value: unknown, member: string): ContactPoint | undefined {
  if (value === undefined) return undefined;
  const shape = `${member} is {name, email?, url?} with an e-mail address or a URL (EDU-22).`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidContract(shape);
  const { name, email, url, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof name !== 'string' || name.length > MAX_TEXT || name.trim() === '')
    throw invalidContract(shape);
  withoutControlCharacters(name, `${member}.name`);
  if (email !== undefined) {
    if (typeof email !== 'string' || email.length > MAX_EMAIL)
      throw invalidContract(`${member}.email is an e-mail address of at most ${MAX_EMAIL} characters.`);
    withoutControlCharacters(email, `${member}.email`);
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw invalidContract(`${member}.email is an e-mail address.`);
  }
  if (url !== undefined) {
    if (typeof url !== 'string' || url.length > MAX_TEXT)
      throw invalidContract(`${member}.url is an http(s) URL of at most ${MAX_TEXT} characters.`);
    withoutControlCharacters(url, `${member}.url`);
    if (!/^https?:\/\/\S+$/.test(url)) throw invalidContract(`${member}.url is an http(s) URL.`);
  }
  if (email === undefined && url === undefined) throw invalidContract(shape);
  return { name, ...optional('email', email as string | undefined), ...optional('url', url as string | undefined) };
}

/** Control characters (C0, DEL, C1): a terminal takes ESC and CSI as commands. A description may hold tabs and line breaks. */
function withoutControlCharacters(text: string, member: string, allowLineBreaks = false): void {
  /* eslint-disable no-control-regex -- finding control characters is the point */
  const control = allowLineBreaks
    ? /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/
    : /[\u0000-\u001f\u007f-\u009f]/;
  /* eslint-enable no-control-regex */
  const found = control.exec(text);
  if (found) {
    const code = `U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    throw invalidContract(
      `${member} holds a control character (${code} at position ${found.index}); control characters are refused (issue 28).`,
    );
  }
}

export function invalidContract(detail: string, errors?: readonly ValidationIssue[]): KoerierError {
  return new KoerierError(problems.badRequest('invalid-contract', detail, errors));
}
