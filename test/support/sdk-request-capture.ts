/**
 * What the lean AWS clients' signing tests share (test/unit/aws/*-requests-signing.test.ts): the
 * requests a client would send, captured as text, and the comparison of one of ours with the
 * SDK's. The SDK's own telemetry and retry headers (`x-amz-user-agent`, `amz-sdk-invocation-id`,
 * `amz-sdk-request`) are taken out of its requests before it signs them, since AWS requires none of
 * them and ours never sends them; `user-agent` is never signed.
 */
import { Readable } from 'node:stream';
import type { FinalizeRequestMiddleware, HttpRequest as SmithyRequest } from '@smithy/types';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import type { AwsTransport } from '../../functions/aws/aws-http-transport.js';

/** AWS's documentation example keys: nothing real, and the same for both clients. */
export const FIXED_CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token-example',
};
export const FIXED_NOW = new Date('2026-11-26T12:34:56.789Z');

const SDK_ONLY_HEADERS = ['x-amz-user-agent', 'amz-sdk-invocation-id', 'amz-sdk-request'];

export interface CapturedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

interface SendableRequest {
  readonly method: string;
  readonly protocol: string;
  readonly hostname: string;
  readonly port?: number | undefined;
  readonly path: string;
  readonly query?: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}

/** A request as text: protocol, host and path as sent, the query sorted (its order means nothing to AWS or the signature), headers lower-cased. */
export function captured(request: SendableRequest): CapturedRequest {
  const query = Object.entries(request.query ?? {})
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .sort()
    .join('&');
  const url = `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ''}${request.path}${query ? `?${query}` : ''}`;
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
  const body = request.body === undefined ? '' : typeof request.body === 'string' ? request.body : Buffer.from(request.body as Uint8Array).toString('utf8');
  return { method: request.method, url, headers, body };
}

/** What a captured request is answered with, with status 200. */
export interface CapturedAnswer {
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Answers with `value(request)` as JSON in `contentType`. */
export function jsonAnswer(contentType: string, value: (request: CapturedRequest) => object): (request: CapturedRequest) => CapturedAnswer {
  return (request) => ({ headers: { 'content-type': contentType }, body: JSON.stringify(value(request)) });
}

/** An SDK client's `requestHandler` that captures each request into `sent` instead of sending it, and gives the client `answer`. */
export function capturingRequestHandler(sent: CapturedRequest[], answer: (request: CapturedRequest) => CapturedAnswer): never {
  return {
    handle: async (request: SmithyRequest) => {
      const capture = captured(request);
      sent.push(capture);
      const { headers, body } = answer(capture);
      return { response: { statusCode: 200, headers, body: Readable.from([Buffer.from(body)]) } };
    },
  } as never;
}

/** The same for a lean client: a transport that captures each request into `sent` and answers `answer`. */
export function capturingTransport(sent: CapturedRequest[], answer: (request: CapturedRequest) => CapturedAnswer): AwsTransport {
  return async (request) => {
    const capture = captured(request);
    sent.push(capture);
    const { headers, body } = answer(capture);
    return { statusCode: 200, headers, body: Buffer.from(body) };
  };
}

/** Both clients sign at FIXED_NOW: `Date` is faked around each test of the `describe` this is called in. */
export function signingAtFixedNow(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(FIXED_NOW);
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

/** Takes the SDK-only headers out of every request `client` signs (see above). */
export function withoutSdkOnlyHeaders<Client extends { middlewareStack: { addRelativeTo: (...args: never[]) => void } }>(client: Client): Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const dropSdkOnly: FinalizeRequestMiddleware<any, any> = (next) => async (args) => {
    const request = args.request as SmithyRequest;
    for (const name of Object.keys(request.headers)) if (SDK_ONLY_HEADERS.includes(name.toLowerCase())) delete request.headers[name];
    return next(args);
  };
  (client.middlewareStack.addRelativeTo as (middleware: unknown, options: unknown) => void)(dropSdkOnly, {
    name: 'dropSdkOnlyHeaders',
    relation: 'before',
    toMiddleware: 'awsAuthMiddleware',
  });
  return client;
}

/**
 * Ours went out as the SDK's did: method, URL, body, signature, date, the `headers` named, every
 * header the signature covers with the same value, and no header the SDK did not send.
 */
export function expectSameSignedRequest(ours: CapturedRequest, sdk: CapturedRequest, headers: readonly string[] = []): void {
  expect(ours.method).toBe(sdk.method);
  expect(ours.url).toBe(sdk.url);
  expect(ours.body).toBe(sdk.body);
  for (const name of ['authorization', 'x-amz-date', ...headers]) expect([name, ours.headers[name]]).toEqual([name, sdk.headers[name]]);
  const signed = /SignedHeaders=([^,]+)/.exec(sdk.headers['authorization']!)![1]!.split(';');
  for (const name of signed) expect([name, ours.headers[name]]).toEqual([name, sdk.headers[name]]);
  expect(Object.keys(ours.headers).sort()).toEqual(
    Object.keys(sdk.headers)
      .filter((name) => name !== 'user-agent')
      .sort(),
  );
}
