/**
 * GET /subscriptions (EDU-7, issue 12 item 8): a client lists its own subscriptions; a client
 * holding `admin` may name another `owner`, or `*` for every client's (a table scan, in no
 * particular order). Paged by the store's opaque cursor; a cursor of another list is a 400.
 */
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import type { HttpRequest, HttpResponse } from '../http/messages.js';
import { refuseUnknownParameters } from '../http/query-parameters.js';
import * as http from './http-mapping.js';
import { InvalidCursorError, type SubscriptionStore } from './store.js';

export async function listSubscriptions(
  store: SubscriptionStore,
  principal: Principal,
  request: HttpRequest,
  now: Date,
): Promise<HttpResponse> {
  refuseUnknownParameters(request, ['owner', 'limit', 'cursor']);
  const page = http.readPageRequest(request.query);
  const owner = request.query['owner'] || undefined;
  if (owner !== undefined && owner !== principal.clientId && !hasScope(principal, scopes.admin))
    throw http.ownerNotAllowed();
  try {
    const found =
      owner === '*' ? await store.listAll(page) : await store.listByOwner(owner ?? principal.clientId, page);
    return http.pageResponse(found, page.limit, now, owner);
  } catch (error) {
    if (error instanceof InvalidCursorError) throw http.invalidCursor();
    throw error;
  }
}
