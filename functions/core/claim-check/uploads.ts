/**
 * Uploads for data too large for any request (EDU-1): POST /payloads gives the producer a
 * short-lived presigned PUT bound to the size and SHA-256 it promised; it then publishes the
 * event with `dataref` to the upload. Before the 202, the ingest checks that the object is there
 * with exactly that size and digest, and rewrites `dataref` to Koerier's own data URL.
 */
import { randomUUID } from 'node:crypto';
import type { AcceptedEvent } from '../cloudevents/accepted-event.js';
import { attributesOf } from '../cloudevents/stored-event.js';
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { readJsonBody, requestBody } from '../http/json-body.js';
import { jsonResponse, type HttpResponse } from '../http/messages.js';
import { KoerierError, problems } from '../http/problems.js';
import { UPLOAD_QUOTA_WINDOW_MS, uploadQuotaExceeded } from '../quotas/client-quotas.js';
import { windowAt, type UsageWindow } from '../quotas/usage-window.js';
import {
  claimCheckAttributes,
  payloadIdOf,
  uploadObjectKey,
  PAYLOAD_PATH_PREFIX,
  UPLOAD_PATH_PREFIX,
} from './payload-reference.js';
import type { ClaimCheckStore, PayloadLedger, UploadTerms } from './ports.js';

/** `koerierdatasize` is a CloudEvents Integer (signed 32 bits): no object may be larger. */
export const MAX_UPLOAD_BYTES = 2_147_483_647;
/** How long the presigned PUT works. */
export const UPLOAD_URL_SECONDS = 900;
/** How long an upload may wait to be published; its object lives the bucket's retention from the grant. */
export const UPLOAD_PUBLISH_WINDOW_MS = 24 * 3600 * 1000;

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";

/** The producer's `{size, digest, contenttype}`. */
export const UPLOAD_BODY = requestBody({
  schema: Type.Object(
    {
      size: Type.Integer({
        minimum: 1,
        maximum: MAX_UPLOAD_BYTES,
        description: 'Length in bytes (the upload must have exactly this length).',
      }),
      digest: Type.String({
        pattern: '^sha-256=:[A-Za-z0-9+/]{43}=:$',
        description: 'SHA-256 of the bytes, RFC 9530 form: `sha-256=:<base64>:`.',
      }),
      contenttype: Type.Optional(
        Type.String({
          maxLength: 256,
          // A media type with its parameters (RFC 9110 §8.3.1).
          pattern: `^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=("[^"\\\\]*"|${TOKEN}))*$`,
          description:
            'Media type of the object (default `application/octet-stream`); the event’s `datacontenttype` wins.',
        }),
      ),
    },
    {
      additionalProperties: false,
      description: 'The object the producer is about to upload: its exact size and SHA-256, and its media type.',
    },
  ),
  problemType: 'invalid-upload',
  requirement: 'EDU-1',
});

export interface UploadDependencies {
  readonly store: Pick<ClaimCheckStore, 'presignedPutUrl' | 'matches'>;
  readonly ledger: Pick<PayloadLedger, 'recordUpload' | 'getUpload' | 'recordPayload'>;
  readonly publicBaseUrl: string;
  /** The bucket's object retention. */
  readonly retentionSeconds: number;
  readonly now: () => number;
  /**
   * Bytes of uploads granted per client per clock hour (issue 28 item 13, `uploadBytesPerHour`):
   * the promised size counts when the URL is granted, whether or not the object is ever put.
   * Without it uploads are not counted.
   */
  readonly quota?: { readonly usage: UsageWindow; readonly limit: number };
}

/** The producer's `{size, digest, contenttype}`; throws the 400 naming every wrong member. */
export function parseUploadRequest(body: Buffer): UploadTerms {
  const { size, digest, contenttype } = readJsonBody(body, UPLOAD_BODY);
  return { size, digest, contentType: contenttype ?? 'application/octet-stream' };
}

/** POST /payloads: a presigned PUT for exactly the promised object, and the `dataref` to publish it with. Throws the 400 for an invalid request. */
export async function grantUpload(body: Buffer, publisher: string, deps: UploadDependencies): Promise<HttpResponse> {
  const terms = parseUploadRequest(body);
  const uploadId = randomUUID();
  const now = deps.now();
  const uncount = await countUpload(terms.size, publisher, now, deps);
  let put: Awaited<ReturnType<UploadDependencies['store']['presignedPutUrl']>>;
  try {
    await deps.ledger.recordUpload({ uploadId, publisher, ...terms, expiresAt: now + UPLOAD_PUBLISH_WINDOW_MS });
    put = await deps.store.presignedPutUrl(uploadObjectKey(uploadId), terms, UPLOAD_URL_SECONDS);
  } catch (error) {
    // No URL was handed out: the bytes are not the client's to pay for (the 5xx frees its key for a retry).
    await uncount().catch(() => undefined);
    throw error;
  }
  return jsonResponse(201, {
    uploadid: uploadId,
    method: 'PUT',
    uploadurl: put.url,
    headers: put.headers,
    uploadexpiresat: new Date(now + UPLOAD_URL_SECONDS * 1000).toISOString(),
    dataref: `${deps.publicBaseUrl}${UPLOAD_PATH_PREFIX}${uploadId}`,
    publishbefore: new Date(now + UPLOAD_PUBLISH_WINDOW_MS).toISOString(),
  });
}

/**
 * Counts `size` bytes in the publisher's hour, or throws the 429 (413 for a size above the whole
 * quota). A conditional add, so grants at once in many containers never pass the quota together.
 * Answers how to take them off again.
 */
async function countUpload(
  size: number,
  publisher: string,
  now: number,
  deps: UploadDependencies,
): Promise<() => Promise<void>> {
  const { quota } = deps;
  if (!quota) return async () => undefined;
  const window = windowAt(now, UPLOAD_QUOTA_WINDOW_MS);
  const key = `uploads/${publisher}`;
  if (size > quota.limit) throw uploadQuotaExceeded(publisher, quota.limit, 0, size, window.retryAfterSeconds);
  const decision = await quota.usage.add(key, size, quota.limit, window.start, UPLOAD_QUOTA_WINDOW_MS);
  if (!decision.added) throw uploadQuotaExceeded(publisher, quota.limit, decision.used, size, window.retryAfterSeconds);
  return () => quota.usage.subtract(key, size, window.start);
}

/**
 * The events with each upload `dataref` replaced by Koerier's data URL, once the upload is this
 * publisher's, not past its window, and its object has exactly the promised size and digest.
 * Throws the 400 otherwise (`upload-with-data`, `upload-unknown`, `upload-incomplete`).
 */
export async function resolveUploads(
  events: readonly AcceptedEvent[],
  publisher: string,
  deps: UploadDependencies,
): Promise<AcceptedEvent[]> {
  const prefix = `${deps.publicBaseUrl}${UPLOAD_PATH_PREFIX}`;
  const result = [...events];
  for (const [index, event] of events.entries()) {
    const dataref = event.attributes['dataref'];
    if (typeof dataref !== 'string' || !dataref.startsWith(prefix)) continue;
    const at = events.length > 1 ? { index } : {};
    const parsed = JSON.parse(event.json) as Record<string, unknown>;
    if ('data' in parsed || 'data_base64' in parsed) {
      throw new KoerierError({
        ...problems.badRequest('upload-with-data', 'An event that refers to an upload carries no data of its own.'),
        ...at,
      });
    }
    const uploadId = dataref.slice(prefix.length);
    const upload = /^[0-9a-f-]{36}$/.test(uploadId) ? await deps.ledger.getUpload(uploadId) : undefined;
    if (!upload || upload.publisher !== publisher || deps.now() > upload.expiresAt) {
      throw new KoerierError({
        ...problems.badRequest('upload-unknown', `No upload of this client is waiting at ${dataref.slice(0, 200)}.`),
        ...at,
      });
    }
    if (!(await deps.store.matches(uploadObjectKey(uploadId), upload))) {
      throw new KoerierError({
        ...problems.badRequest(
          'upload-incomplete',
          `The uploaded object is missing, or not the ${upload.size} bytes with digest ${upload.digest} promised.`,
        ),
        ...at,
      });
    }
    const contentType = typeof parsed['datacontenttype'] === 'string' ? parsed['datacontenttype'] : upload.contentType;
    const payloadId = payloadIdOf(event.source, event.id, { digest: upload.digest, contentType, uploadId });
    await deps.ledger.recordPayload({
      payloadId,
      objectKey: uploadObjectKey(uploadId),
      source: event.source,
      eventId: event.id,
      publisher,
      digest: upload.digest,
      size: upload.size,
      contentType,
      // From the grant: the object is at most this old, so it lives at least this long.
      objectExpiresAt: upload.expiresAt - UPLOAD_PUBLISH_WINDOW_MS + deps.retentionSeconds * 1000,
    });
    const json = JSON.stringify({
      ...attributesOf(parsed),
      dataref: `${deps.publicBaseUrl}${PAYLOAD_PATH_PREFIX}${payloadId}`,
      [claimCheckAttributes.digest]: upload.digest,
      [claimCheckAttributes.size]: upload.size,
    });
    result[index] = { ...event, json, attributes: JSON.parse(json) as AcceptedEvent['attributes'] };
  }
  return result;
}
