/**
 * Requests to the contract register (`/contracts…`, `/contract-bindings…`) for the `koerier contracts` commands, telling a
 * gateway that lacks a route (an older Koerier: 404 or 405) from a refusal of what was asked.
 */
import { problemError, type ApiAnswer, type KoerierClient, type RequestOptions } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import type { Context } from '../output.js';

/** `/<name>` or `/<name>/versions/<version>`, below `/contracts`. */
export function contractPath(name: string, version?: string): string {
  return `/${encodeURIComponent(name)}${version === undefined ? '' : `/versions/${encodeURIComponent(version)}`}`;
}

/**
 * A request to `/contracts<rest>`, any answer but a 2xx a CliError. A 404 or 405 is told apart:
 * no register at all (the collection is missing), a change this gateway's register cannot make
 * yet (`what`), or what the problem says (an unknown contract or version).
 */
export async function registerRequest(
  context: Context,
  method: string,
  rest: string,
  options: RequestOptions = {},
  what?: string,
): Promise<ApiAnswer> {
  const answer = await context.client.request(method, `/contracts${rest}`, options);
  await refuseMissingRegister(context, method, rest, answer, what);
  if (answer.status >= 300) throw problemError(answer, `${method} /contracts${rest}`);
  return answer;
}

/**
 * A typed change to the register (`PUT` or `PATCH` of `/contracts<rest>`): its data and status. A
 * refusal is a CliError, a 404 or 405 told apart as in registerRequest.
 */
export async function registerChange<T>(
  context: Context,
  method: 'PUT' | 'PATCH',
  rest: string,
  what: string,
  call: (api: KoerierClient['api']) => Promise<{ data?: T; response?: Response }>,
): Promise<{ data: T; status: number }> {
  const outcome = await context.client.outcome(call);
  if (outcome.ok) return { data: outcome.data, status: outcome.response.status };
  await refuseMissingRegister(context, method, rest, outcome.refusal, what);
  throw problemError(outcome.refusal, `${method} /contracts${rest}`);
}

/** Throws when a 404 or 405 means the gateway has no register, or not the route of this change. */
async function refuseMissingRegister(
  context: Context,
  method: string,
  rest: string,
  answer: ApiAnswer,
  what: string | undefined,
): Promise<void> {
  if (answer.status !== 404 && answer.status !== 405) return;
  const collection = method === 'GET' && rest === '' ? answer : await context.client.request('GET', '/contracts');
  if (collection.status === 404 || collection.status === 405) {
    throw new CliError(
      `the contract register is not yet available on this gateway (${context.client.gatewayUrl})`,
      exitCodes.notFound,
    );
  }
  if (method !== 'GET' && (await routeMissing(context, method, rest, answer))) {
    throw new CliError(
      `${what ?? `${method} /contracts${rest}`} is not yet available on this gateway (${context.client.gatewayUrl})`,
      exitCodes.notFound,
    );
  }
}

/**
 * Whether a 404/405 to a change means the gateway lacks its route: a 405 always does; publishing
 * (PUT) never answers 404 on a gateway that has it; a PATCH's 404 does when the thing it names is there.
 */
async function routeMissing(context: Context, method: string, rest: string, answer: ApiAnswer): Promise<boolean> {
  if (answer.status === 405 || method === 'PUT') return true;
  const target = await context.client.request('GET', `/contracts${rest}`);
  return target.status >= 200 && target.status < 300;
}

/**
 * A request to `/contract-bindings<rest>` (which event types the ingest checks against a contract),
 * any answer but a 2xx a CliError; a gateway without the collection has no bindings yet.
 */
export async function bindingRequest(
  context: Context,
  method: string,
  rest: string,
  options: RequestOptions = {},
): Promise<ApiAnswer> {
  const answer = await context.client.request(method, `/contract-bindings${rest}`, options);
  if (answer.status === 404 || answer.status === 405) {
    const collection =
      method === 'GET' && rest === '' ? answer : await context.client.request('GET', '/contract-bindings');
    if (collection.status === 404 || collection.status === 405) {
      throw new CliError(
        `data contracts at the ingest (contract bindings) are not yet available on this gateway (${context.client.gatewayUrl})`,
        exitCodes.notFound,
      );
    }
  }
  if (answer.status >= 300) throw problemError(answer, `${method} /contract-bindings${rest}`);
  return answer;
}
