/** Koerier's API as the signed-in user: every call with the user's own token, failures as problem details. */
import type { ConsoleConfig, Session } from './auth.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: { title?: string; detail?: string },
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
  }
}

export interface Api {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
}

export function apiFor(config: ConsoleConfig, session: Session): Api {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${session.accessToken}`,
      accept: 'application/json',
    };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      // State-changing calls carry an Idempotency-Key like every other client's (EDU-IDEM).
      headers['idempotency-key'] = crypto.randomUUID();
    }
    const response = await fetch(`${config.apiUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as unknown) : {};
    if (!response.ok) throw new ApiError(response.status, parsed as { title?: string; detail?: string });
    return parsed as T;
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}
