/**
 * The correlation id of an ingest request (issue 13, item 4): one id that every log line of every
 * stage of its events carries — the ingest, the router, the delivery — and that the receiver gets
 * as the `X-Correlation-ID` header of each webhook request, so an operator and a subscriber can
 * name the same event's journey with one value.
 *
 * A caller's own `X-Correlation-ID` is honoured when it is a plain token (letters, digits and
 * `._:+/=-`, at most 128 characters; API Gateway's request ids are base64), so a producer's id runs through unchanged; anything else is
 * ignored, never logged, so a header cannot inject into a log line or a receiver's header. Without
 * one, API Gateway's request id names the request (also in the `apigw-requestid` answer header).
 * `traceparent` is not read: X-Ray's trace id is on every log line already (Powertools Logger).
 */
import { randomUUID } from 'node:crypto';

export const CORRELATION_ID_HEADER = 'x-correlation-id';

const CORRELATION_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;

/** Whether `value` may serve as a correlation id (a caller's header, or one read back from a queue message). */
export function isCorrelationId(value: string | undefined): value is string {
  return value !== undefined && CORRELATION_ID.test(value);
}

/** The caller's `X-Correlation-ID` when it is well-formed, else the gateway's request id, else a fresh UUID. */
export function correlationIdOf(request: {
  readonly headers: Readonly<Record<string, string>>;
  readonly requestId?: string | undefined;
}): string {
  const given = request.headers[CORRELATION_ID_HEADER]?.trim();
  if (isCorrelationId(given)) return given;
  if (isCorrelationId(request.requestId)) return request.requestId;
  return randomUUID();
}
