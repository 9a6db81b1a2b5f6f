/**
 * A ZGW Notificaties API client for `koerier zgw import` (issue 34, "Moving over"): the same client
 * talks to Open Notificaties (the source) and to Koerier's own `/zgw/api/v1` (the target), as any
 * ZGW client does. It signs its own token (HS256, `client_id` and `iat`, the "JWT-Claims" scheme),
 * reads lists whole and creates resources, and turns the ZGW error body (`Fout`, `ValidatieFout`
 * with `invalidParams`) into one readable line.
 */
import { readFile } from 'node:fs/promises';
import { CliError, exitCodeForStatus, exitCodes } from '../exit-codes.js';

export interface ZgwCredentials {
  readonly clientId: string;
  readonly secret: string;
}

export interface ZgwAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** Open Notificaties never pages; a paged list (DRF's `{count, next, results}`) is followed anyway, up to this many pages. */
const MAX_PAGES = 1000;

export class ZgwClient {
  private readonly base: string;

  constructor(
    base: string,
    private readonly credentials: ZgwCredentials,
    /** Named in messages: "Open Notificaties" or "Koerier". */
    readonly name: string,
  ) {
    this.base = base.replace(/\/+$/, '');
  }

  get baseUrl(): string {
    return this.base;
  }

  /**
   * A fresh token per call: ZGW tokens have no `exp`, the server refuses them by the age of `iat`
   * (Koerier and Open Notificaties: one hour by default), so a long import never outlives its token.
   */
  private async token(): Promise<string> {
    // jose only when a ZGW command signs: loaded here, so that no other command starts with it.
    const { SignJWT } = await import('jose');
    const { clientId, secret } = this.credentials;
    return new SignJWT({ iss: clientId, client_id: clientId, user_id: '', user_representation: '' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt()
      .sign(new TextEncoder().encode(secret));
  }

  async call(method: string, url: string, body?: unknown): Promise<ZgwAnswer> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${await this.token()}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    };
    let response: Response;
    try {
      response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    } catch (error) {
      const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
      throw new CliError(`${this.name} at ${url} could not be reached: ${cause}`, exitCodes.unavailable);
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Not JSON (a proxy's error page): kept as text for the message.
    }
    return { status: response.status, body: parsed };
  }

  /** Every item of a list resource (`/kanaal`, `/abonnement`); a refusal ends the command. */
  async list(path: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    const seen = new Set<string>();
    let url: string | undefined = `${this.base}${path}`;
    while (url !== undefined && !seen.has(url) && seen.size < MAX_PAGES) {
      seen.add(url);
      const answer = await this.call('GET', url);
      if (answer.status !== 200) {
        throw new CliError(
          `GET ${url} on ${this.name}: ${describeZgwRefusal(answer)}`,
          exitCodeForStatus(answer.status),
        );
      }
      const page = pageOf(answer.body);
      if (page === undefined)
        throw new CliError(`GET ${url} on ${this.name}: the answer is not a list`, exitCodes.refused);
      items.push(...page.results);
      url = page.next;
    }
    return items;
  }

  create(path: string, body: unknown): Promise<ZgwAnswer> {
    return this.call('POST', `${this.base}${path}`, body);
  }
}

/** Open Notificaties' lists are plain arrays; other ZGW APIs page them as DRF does. */
function pageOf(body: unknown): { results: Record<string, unknown>[]; next?: string } | undefined {
  if (Array.isArray(body)) return { results: body as Record<string, unknown>[] };
  if (typeof body !== 'object' || body === null) return undefined;
  const { results, next } = body as { results?: unknown; next?: unknown };
  if (!Array.isArray(results)) return undefined;
  return {
    results: results as Record<string, unknown>[],
    ...(typeof next === 'string' && next !== '' ? { next } : {}),
  };
}

/** The reasons of a ZGW error body: each `invalidParams` entry as `name: reason (code)`, else the `detail`. */
export function describeZgwRefusal(answer: ZgwAnswer): string {
  const body = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as {
    code?: unknown;
    detail?: unknown;
    title?: unknown;
    invalidParams?: { name?: unknown; code?: unknown; reason?: unknown }[];
  };
  const params = Array.isArray(body.invalidParams) ? body.invalidParams : [];
  const reasons = params.map((p) => `${String(p.name)}: ${String(p.reason)} (${String(p.code)})`);
  if (reasons.length > 0) return `${answer.status}, ${reasons.join('; ')}`;
  const detail = body.detail ?? body.title ?? (typeof answer.body === 'string' ? answer.body.slice(0, 200) : '');
  return `${answer.status}${body.code ? ` ${String(body.code)}` : ''}${detail ? `, ${String(detail)}` : ''}`;
}

/** A secret from a file (`-`: stdin) or else from the environment; neither is a usage error naming both. */
export async function secretFrom(file: string | undefined, envName: string, what: string): Promise<string> {
  if (file !== undefined) {
    const text = file === '-' ? await stdinText() : await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined || text.trim() === '')
      throw new CliError(`the ${what} secret file ${file} cannot be read or is empty`, exitCodes.usage);
    return text.trim();
  }
  const value = process.env[envName];
  if (!value) throw new CliError(`no ${what} secret: give it in a file or set ${envName}`, exitCodes.usage);
  return value;
}

async function stdinText(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}
