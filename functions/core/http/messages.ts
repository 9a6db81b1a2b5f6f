/**
 * The HTTP request and response as the domain sees them: no Lambda or API Gateway types.
 * Handlers translate API Gateway events to and from these.
 */
export interface HttpRequest {
  readonly method: string;
  /** Raw path, e.g. `/subscriptions/42`. */
  readonly path: string;
  /** Header names in lower case; repeated headers joined with `, ` as API Gateway does. */
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  /** API Gateway's route key, e.g. `PATCH /subscriptions/{id}`, or `$default` (functions/core/http/route-table.ts). */
  readonly routeKey: string;
  readonly pathParameters: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** API Gateway's id of this request (`requestContext.requestId`), where a gateway gave one. */
  readonly requestId?: string;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** UTF-8 text (JSON or empty), or with `base64` the bytes of a claim-check object in base64. */
  readonly body: string;
  /** The body is base64 of bytes (API Gateway's `isBase64Encoded`). */
  readonly base64?: true;
}

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(value),
  };
}

export function emptyResponse(status: number, headers: Record<string, string> = {}): HttpResponse {
  return { status, headers, body: '' };
}

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string {
  if (!contentType) return '';
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}
