/**
 * One check every list route runs before it reads its query (issue 13, item 5): a parameter the
 * route does not know is refused with 400, naming it, instead of being ignored. A misspelt filter
 * (`?outcom=dead-lettered`) would otherwise answer the whole unfiltered list, which reads as "this
 * is what matched".
 */
import type { HttpRequest } from './messages.js';
import { KoerierError, problems } from './problems.js';

/** Throws 400 `invalid-parameter` when `request` has a query parameter not in `known`. */
export function refuseUnknownParameters(request: Pick<HttpRequest, 'query'>, known: readonly string[]): void {
  const unknown = Object.keys(request.query).filter((name) => !known.includes(name));
  if (unknown.length === 0) return;
  throw new KoerierError(
    problems.badRequest(
      'invalid-parameter',
      `Unknown query parameter${unknown.length > 1 ? 's' : ''}: ${unknown.slice(0, 10).join(', ')}. This route takes ${known.join(', ')}.`,
    ),
  );
}
