/**
 * GET /payloads/{id}: the data behind a Koerier `dataref` (EDU-1, CARD-6), for the publisher of
 * the event and the owners of the subscriptions it went to by reference, and nobody else — to
 * anyone else the object does not exist (404). Every fetch is logged: who, which event, when.
 */
import { emptyResponse, type HttpResponse } from '../http/messages.js';
import { KoerierError, problem, problems } from '../http/problems.js';
import type { Log } from '../ports/log.js';
import { etagOf, isPayloadId } from './payload-reference.js';
import type { ClaimCheckStore, PayloadLedger } from './ports.js';

export interface FetchSettings {
  /** Objects up to this size come in the answer; larger ones by a redirect to a presigned URL. */
  readonly maxStreamedBytes: number;
  /** How long a presigned URL lives. */
  readonly presignedUrlSeconds: number;
}

export interface FetchDependencies {
  readonly store: ClaimCheckStore;
  readonly ledger: PayloadLedger;
  readonly settings: FetchSettings;
  readonly log: Log;
  readonly now: () => number;
}

const PRIVATE = { 'cache-control': 'private, no-store' };

/** The data (200), a 304 or a 307 to a presigned URL; throws the 404 (not there, or not for this client) and the 410 (expired). */
export async function fetchPayload(
  payloadId: string,
  clientId: string,
  ifNoneMatch: string | undefined,
  deps: FetchDependencies,
): Promise<HttpResponse> {
  const record = isPayloadId(payloadId) ? await deps.ledger.get(payloadId) : undefined;
  const entitled = record !== undefined && (record.publisher === clientId || record.readers.includes(clientId));
  const at = new Date(deps.now()).toISOString();
  if (!record || !entitled) {
    deps.log.info('payload fetch refused', { client: clientId, payloadId: payloadId.slice(0, 64), at });
    throw new KoerierError(problems.notFound('No such data, or not for this client.'));
  }
  const who = { client: clientId, payloadId, source: record.source, id: record.eventId, at };
  const etag = etagOf(record.digest);
  if (deps.now() > record.objectExpiresAt) {
    deps.log.info('payload fetch: expired', who);
    throw gone(record.objectExpiresAt);
  }
  if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    deps.log.info('payload fetched', { ...who, answer: 304 });
    return emptyResponse(304, { etag, ...PRIVATE });
  }
  const headers = { etag, 'repr-digest': record.digest, ...PRIVATE };
  if (record.size > deps.settings.maxStreamedBytes) {
    const location = await deps.store.presignedGetUrl(record.objectKey, deps.settings.presignedUrlSeconds);
    // The URL is a bearer credential: it goes to the caller, never into a log.
    deps.log.info('payload fetched', { ...who, answer: 307, size: record.size });
    return emptyResponse(307, { location, ...headers });
  }
  const payload = await deps.store.get(record.objectKey);
  if (!payload) {
    deps.log.info('payload fetch: expired', who);
    throw gone(record.objectExpiresAt);
  }
  deps.log.info('payload fetched', { ...who, answer: 200, size: payload.bytes.length });
  return {
    status: 200,
    headers: { 'content-type': record.contentType, ...headers },
    body: payload.bytes.toString('base64'),
    base64: true,
  };
}

function gone(expiredAt: number): KoerierError {
  return new KoerierError(
    problem(
      410,
      'payload-expired',
      `The data of this event was kept until ${new Date(expiredAt).toISOString()} and is gone.`,
    ),
  );
}
