import { request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionSpec } from '../../functions/config/resources.js';
import {
  createApiGateway,
  MAX_HEADER_LINES,
  MAX_LAMBDA_EVENT_BYTES,
  MAX_REQUEST_BYTES,
  type ApiGateway,
} from '../../local/api-gateway.js';
import type { LoadedFunction } from '../../local/lambda-runtime.js';
import { eventually } from '../support/waiting.js';
import { ANY_PROBLEM_TYPE, problemTypeUri } from '../support/problem-types.js';

/**
 * A known-good HTTP API payload format 2.0 event, shaped as in the AWS developer guide
 * ("Working with AWS Lambda proxy integrations for HTTP APIs"), without the optional
 * authorizer, mutual-TLS and stage-variable members that Koerier's API does not configure.
 */
const AWS_EXAMPLE_V2_EVENT = {
  version: '2.0',
  routeKey: '$default',
  rawPath: '/my/path',
  rawQueryString: 'parameter1=value1&parameter1=value2&parameter2=value',
  cookies: ['cookie1', 'cookie2'],
  headers: { header1: 'value1', header2: 'value1,value2' },
  queryStringParameters: { parameter1: 'value1,value2', parameter2: 'value' },
  requestContext: {
    accountId: '123456789012',
    apiId: 'api-id',
    domainName: 'id.execute-api.us-east-1.amazonaws.com',
    domainPrefix: 'id',
    http: { method: 'POST', path: '/my/path', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'agent' },
    requestId: 'id',
    routeKey: '$default',
    stage: '$default',
    time: '12/Mar/2020:19:03:58 +0000',
    timeEpoch: 1583348638390,
  },
  body: 'Hello from Lambda',
  pathParameters: { parameter1: 'value1' },
  isBase64Encoded: false,
};

function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return 'array';
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .map(([key, member]) => [
          key,
          key === 'headers' || key === 'queryStringParameters' || key === 'pathParameters' ? 'map' : shapeOf(member),
        ])
        .sort(),
    );
  }
  return typeof value;
}

interface Invocation {
  readonly event: APIGatewayProxyEventV2;
  readonly context: Context;
}

function testFunction(
  name: string,
  spec: Partial<FunctionSpec>,
  handler: (event: APIGatewayProxyEventV2) => Promise<unknown>,
  seen: Invocation[],
): LoadedFunction {
  return {
    name,
    spec: { entry: `test/${name}.ts`, memoryMb: 256, timeoutSeconds: 5, ...spec },
    handler: async (event: APIGatewayProxyEventV2, context: Context) => {
      seen.push({ event, context });
      return handler(event);
    },
  };
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** node:http rather than fetch: the tests need repeated headers and raw request targets (raw headers need an explicit Host). */
function send(
  base: string,
  method: string,
  target: string,
  headers: [string, string][] = [],
  body?: Buffer | string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: target,
        headers: [['Host', url.host], ...headers].flat() as unknown as Record<string, string>,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface RawAnswer {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/**
 * Raw bytes over node:net, for what no HTTP client sends: bare LFs, broken framing, thousands of
 * header lines, a body cut off. Resolves with what came back before the server closed.
 */
function raw(
  base: string,
  chunks: readonly (string | Buffer)[],
  options: { abortAfterWrite?: boolean; halfCloseAfterWrite?: boolean } = {},
): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      for (const chunk of chunks) socket.write(chunk);
      if (options.abortAfterWrite) setTimeout(() => socket.destroy(), 50);
      if (options.halfCloseAfterWrite) socket.end();
    });
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split === -1 ? text : text.slice(0, split);
      let body = split === -1 ? '' : text.slice(split + 4);
      if (/^transfer-encoding: chunked/im.test(head)) {
        let decoded = '';
        for (let size = parseInt(body, 16); size > 0; size = parseInt(body, 16)) {
          const start = body.indexOf('\r\n') + 2;
          decoded += body.slice(start, start + size);
          body = body.slice(start + size + 2);
        }
        body = decoded;
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body });
    });
  });
}

describe('API Gateway HTTP API emulation (payload format 2.0)', () => {
  const seen: Invocation[] = [];
  const logs: string[] = [];
  let gateway: ApiGateway;
  let base: string;
  const last = () => seen.at(-1) as Invocation;

  beforeAll(async () => {
    // The emulation itself, on routes served as written: Koerier's base path is checked in test/e2e/host-api.test.ts.
    gateway = createApiGateway(
      (line) => logs.push(line),
      (path) => path,
    );
    await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => gateway.server.close(resolve));
  });

  it('answers 503 as API Gateway does until the functions are mounted', async () => {
    const response = await send(base, 'GET', '/events');
    expect(response.status).toBe(503);
    expect(JSON.parse(response.body.toString())).toEqual({ message: 'Service Unavailable' });
  });

  it('CARD-3: once functions are mounted, the 503 of a stage being deployed gives way to their answers', async () => {
    const ok = async () => ({ statusCode: 200, body: 'ok' });
    gateway.mount(
      [
        testFunction(
          'ingest',
          {
            routes: [
              { method: 'POST', path: '/events' },
              { method: 'OPTIONS', path: '/events' },
            ],
          },
          ok,
          seen,
        ),
        testFunction(
          'registry',
          {
            routes: [
              { method: 'GET', path: '/subscriptions/{id}' },
              { method: 'GET', path: '/subscriptions/mine' },
              { method: 'GET', path: '/files/{path+}' },
            ],
          },
          ok,
          seen,
        ),
        testFunction(
          'fallback',
          { defaultRoute: true },
          async () => ({
            statusCode: 404,
            headers: { 'content-type': 'application/problem+json' },
            body: '{"status":404}',
          }),
          seen,
        ),
        testFunction(
          'shapes',
          {
            routes: [
              { method: 'GET', path: '/structured' },
              { method: 'GET', path: '/plain' },
              { method: 'GET', path: '/throws' },
              { method: 'GET', path: '/bytes/{size}' },
              { method: 'GET', path: '/slow' },
              { method: 'POST', path: '/after-a-while' },
            ],
            timeoutSeconds: 1,
          },
          async (event) => {
            switch (event.rawPath) {
              case '/structured':
                return {
                  statusCode: 201,
                  headers: { 'x-count': 3, 'content-type': 'image/png' },
                  cookies: ['a=1; Path=/', 'b=2; HttpOnly'],
                  body: Buffer.from([0, 1, 254, 255]).toString('base64'),
                  isBase64Encoded: true,
                };
              case '/plain':
                return { hello: 'world' };
              case '/throws':
                throw new Error('boom in the handler');
              case '/bytes/4194304':
              case '/bytes/4718592':
                // Binary bodies travel base64-encoded: 4 MiB is 5.6 MB of result, 4.5 MiB is past 6 MiB.
                return {
                  statusCode: 200,
                  body: Buffer.alloc(Number(event.pathParameters!['size']), 1).toString('base64'),
                  isBase64Encoded: true,
                };
              case '/after-a-while':
                await new Promise((resolve) => setTimeout(resolve, 200));
                return { statusCode: 202, body: `took ${event.body ?? ''}` };
              default:
                return new Promise(() => undefined); // never settles: the 1 s timeout must end it
            }
          },
          seen,
        ),
      ],
      [
        {
          method: 'GET',
          path: '/health',
          handle: async () => ({
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: '{"status":"ok"}',
          }),
        },
      ],
    );
    expect((await send(base, 'OPTIONS', '/events')).status).toBe(200);
    expect((await send(base, 'GET', '/health')).status).toBe(200);
  });

  it('CARD-3: a routed request becomes an event with exactly the members of the AWS example, filled in as API Gateway does', async () => {
    const body = '{"specversion":"1.0"}';
    const response = await send(
      base,
      'POST',
      '/events?parameter1=value1&parameter1=value2&parameter2=a%20b+c',
      [
        ['Content-Type', 'application/json'],
        ['X-Repeated', 'one'],
        ['X-Repeated', 'two'],
        ['Cookie', 'cookie1=x; cookie2=y'],
        ['User-Agent', 'koerier-test/1'],
      ],
      body,
    );
    expect(response.status).toBe(200);
    const { event, context } = last();

    const { pathParameters: _noPathParameters, ...exampleWithoutPathParameters } = AWS_EXAMPLE_V2_EVENT;
    expect(shapeOf(event)).toEqual(shapeOf(exampleWithoutPathParameters)); // a route without parameters has no pathParameters
    expect(event.version).toBe('2.0');
    expect(event.routeKey).toBe('POST /events');
    expect(event.rawPath).toBe('/events');
    expect(event.rawQueryString).toBe('parameter1=value1&parameter1=value2&parameter2=a%20b+c');
    expect(event.queryStringParameters).toEqual({ parameter1: 'value1,value2', parameter2: 'a b c' });
    expect(event.cookies).toEqual(['cookie1=x', 'cookie2=y']);
    expect(event.headers['cookie']).toBeUndefined();
    expect(event.headers['x-repeated']).toBe('one,two');
    expect(event.headers['content-type']).toBe('application/json');
    expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(event.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(event.body).toBe(body);
    expect(event.isBase64Encoded).toBe(false);
    expect(event.requestContext).toMatchObject({
      http: {
        method: 'POST',
        path: '/events',
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'koerier-test/1',
      },
      routeKey: 'POST /events',
      stage: '$default',
      domainName: '127.0.0.1',
    });
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(Math.abs(event.requestContext.timeEpoch - Date.now())).toBeLessThan(60_000);
    expect(response.headers['apigw-requestid']).toBe(event.requestContext.requestId);

    expect(context.functionName).toBe('koerier-ingest');
    expect(context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(0);
    expect(context.getRemainingTimeInMillis()).toBeLessThanOrEqual(5000);
  });

  it('CARD-3: bodies that are not text reach the handler base64-encoded, byte for byte', async () => {
    const bytes = Buffer.from([0xff, 0x00, 0x7b, 0x22, 0xc3]);
    for (const contentType of ['application/octet-stream', 'application/cloudevents+json; charset=utf-8', undefined]) {
      await send(base, 'POST', '/events', contentType ? [['Content-Type', contentType]] : [], bytes);
      const { event } = last();
      expect(event.isBase64Encoded).toBe(true);
      expect(Buffer.from(event.body ?? '', 'base64')).toEqual(bytes);
    }
    await send(base, 'POST', '/events', [['Content-Type', 'text/plain; charset=utf-8']], 'plain text');
    expect(last().event).toMatchObject({ body: 'plain text', isBase64Encoded: false });
    await send(base, 'OPTIONS', '/events');
    expect(last().event.body).toBeUndefined();
    expect(last().event.isBase64Encoded).toBe(false);
    expect(last().event.queryStringParameters).toBeUndefined();
    expect(last().event.cookies).toBeUndefined();
  });

  it('CARD-3: path parameters are decoded, literal routes win over parameters, greedy parameters take the rest', async () => {
    await send(base, 'GET', '/subscriptions/sub%2042');
    expect(last().event).toMatchObject({ routeKey: 'GET /subscriptions/{id}', pathParameters: { id: 'sub 42' } });
    await send(base, 'GET', '/subscriptions/mine');
    expect(last().event.routeKey).toBe('GET /subscriptions/mine');
    expect(last().event.pathParameters).toBeUndefined();
    await send(base, 'GET', '/files/a/b/c.json');
    expect(last().event).toMatchObject({ routeKey: 'GET /files/{path+}', pathParameters: { path: 'a/b/c.json' } });
  });

  it('CARD-3: unmatched paths and methods go to the default-route function as $default', async () => {
    const unknownPath = await send(base, 'GET', '/nothing/here');
    expect(unknownPath.status).toBe(404);
    expect(unknownPath.headers['content-type']).toBe('application/problem+json');
    expect(last().event).toMatchObject({
      routeKey: '$default',
      rawPath: '/nothing/here',
      requestContext: { routeKey: '$default' },
    });
    await send(base, 'DELETE', '/events');
    expect(last().event).toMatchObject({ routeKey: '$default', requestContext: { http: { method: 'DELETE' } } });
    await send(base, 'GET', '/subscriptions/a/b');
    expect(last().event.routeKey).toBe('$default');
  });

  it('writes a structured result: status, headers, each cookie as Set-Cookie, base64 bodies decoded', async () => {
    const response = await send(base, 'GET', '/structured');
    expect(response.status).toBe(201);
    expect(response.headers['x-count']).toBe('3');
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; HttpOnly']);
    expect(response.body).toEqual(Buffer.from([0, 1, 254, 255]));
  });

  it('a result without statusCode is a 200 JSON body, as in payload format 2.0', async () => {
    const response = await send(base, 'GET', '/plain');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.body.toString())).toEqual({ hello: 'world' });
  });

  it('a handler that throws gets API Gateway’s 500 body, and the error is logged', async () => {
    const response = await send(base, 'GET', '/throws');
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body.toString())).toEqual({ message: 'Internal Server Error' });
    const failure = logs
      .map((line) => JSON.parse(line))
      .find((entry) => entry.message === 'function failed' && entry.routeKey === 'GET /throws');
    expect(failure).toMatchObject({
      level: 'error',
      function: 'shapes',
      error: { name: 'Error', message: 'boom in the handler' },
    });
  });

  it("EDU-1, CARD-3: a result past Lambda's 6 MiB response limit is a 500, as in AWS; 4 MiB of bytes (the claim check's largest streamed fetch) passes", async () => {
    const fits = await send(base, 'GET', '/bytes/4194304');
    expect(fits.status).toBe(200);
    expect(fits.body.length).toBe(4_194_304);
    const tooLarge = await send(base, 'GET', '/bytes/4718592');
    expect(tooLarge.status).toBe(500);
    expect(JSON.parse(tooLarge.body.toString())).toEqual({ message: 'Internal Server Error' });
  });

  it('a handler that outlives its timeout ends as a 500, as a timed-out Lambda does', async () => {
    const response = await send(base, 'GET', '/slow');
    expect(response.status).toBe(500);
    const failure = logs
      .map((line) => JSON.parse(line))
      .find((entry) => entry.message === 'function failed' && entry.routeKey === 'GET /slow');
    expect(failure.error.message).toMatch(/timed out after 1\.00 seconds/);
  });

  it("review #13: refuses bodies over API Gateway's 10 MB with a 413 problem; exactly 10 MB passes API Gateway and meets Lambda's 6 MB", async () => {
    const count = seen.length;
    const tooLarge = await send(
      base,
      'POST',
      '/events',
      [['Content-Type', 'application/octet-stream']],
      Buffer.alloc(MAX_REQUEST_BYTES + 1, 1),
    );
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(tooLarge.body.toString())).toMatchObject({
      status: 413,
      title: 'Payload Too Large',
      detail: expect.stringContaining(`API Gateway's limit of ${MAX_REQUEST_BYTES}`),
    });

    const atLimit = await send(
      base,
      'POST',
      '/events',
      [['Content-Type', 'application/octet-stream']],
      Buffer.alloc(MAX_REQUEST_BYTES, 1),
    );
    expect(atLimit.status).toBe(413);
    expect(JSON.parse(atLimit.body.toString()).detail).toContain(`Lambda accepts at most ${MAX_LAMBDA_EVENT_BYTES}`);
    expect(seen.length).toBe(count); // neither reached the function
  });

  /** Bytes of the event JSON beyond the body as sent, for a request like `probe` (same headers, same number of digits in Content-Length). */
  async function envelopeBytes(
    contentType: string,
    probe: Buffer,
    bodyInEvent: (event: APIGatewayProxyEventV2) => number,
  ): Promise<number> {
    const response = await send(base, 'POST', '/events', [['Content-Type', contentType]], probe);
    expect(response.status).toBe(200);
    const event = last().event;
    return Buffer.byteLength(JSON.stringify(event)) - bodyInEvent(event);
  }

  it("review #13: Lambda's 6 MB request limit is measured on the event JSON: a text body whose event is exactly 6,291,456 bytes is invoked, one byte more is a 413", async () => {
    const envelope = await envelopeBytes(
      'application/json',
      Buffer.alloc(1_000_000, 'a'),
      (event) => (event.body ?? '').length,
    );
    const largest = MAX_LAMBDA_EVENT_BYTES - envelope;
    const count = seen.length;
    const under = await send(
      base,
      'POST',
      '/events',
      [['Content-Type', 'application/json']],
      Buffer.alloc(largest, 'a'),
    );
    expect(under.status).toBe(200);
    expect(seen.length).toBe(count + 1);
    expect(Buffer.byteLength(JSON.stringify(last().event))).toBe(MAX_LAMBDA_EVENT_BYTES);

    const over = await send(
      base,
      'POST',
      '/events',
      [['Content-Type', 'application/json']],
      Buffer.alloc(largest + 1, 'a'),
    );
    expect(over.status).toBe(413);
    expect(over.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(over.body.toString())).toMatchObject({
      status: 413,
      detail: expect.stringContaining(`${MAX_LAMBDA_EVENT_BYTES + 1} bytes`),
    });
    expect(seen.length).toBe(count + 1);
  });

  it('review #13: a binary body counts base64-encoded, as API Gateway puts it in the event: the largest that fits is invoked, one byte more is a 413', async () => {
    const probe = Buffer.alloc(1_200_000, 7); // a multiple of 3: base64 without padding
    const envelope = await envelopeBytes('application/cloudevents+json', probe, (event) => (event.body ?? '').length);
    expect(last().event.isBase64Encoded).toBe(true);
    const largest = Math.floor((MAX_LAMBDA_EVENT_BYTES - envelope) / 4) * 3;
    const count = seen.length;
    const under = await send(
      base,
      'POST',
      '/events',
      [['Content-Type', 'application/cloudevents+json']],
      Buffer.alloc(largest, 7),
    );
    expect(under.status).toBe(200);
    expect(seen.length).toBe(count + 1);
    expect(Buffer.byteLength(JSON.stringify(last().event))).toBeLessThanOrEqual(MAX_LAMBDA_EVENT_BYTES);

    const over = await send(
      base,
      'POST',
      '/events',
      [['Content-Type', 'application/cloudevents+json']],
      Buffer.alloc(largest + 1, 7),
    );
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body.toString()).detail).toContain('base64-encoded');
    expect(seen.length).toBe(count + 1);
  });

  it(`review #12: more than ${MAX_HEADER_LINES} header lines get 431 with a problem body, never an event with attributes dropped; ${MAX_HEADER_LINES} still pass`, async () => {
    const count = seen.length;
    const request = (fillers: number) => [
      'POST /events HTTP/1.1\r\nHost: koerier\r\nContent-Type: application/json\r\nContent-Length: 2\r\n',
      'a:b\r\n'.repeat(fillers),
      'ce-id: 1\r\nce-source: /s\r\nce-type: t\r\nce-specversion: 1.0\r\nConnection: close\r\n\r\n{}',
    ];
    // 3 + fillers + 5 header lines: MAX_HEADER_LINES + 1, then exactly MAX_HEADER_LINES.
    const refused = await raw(base, request(MAX_HEADER_LINES - 7));
    expect(refused.status).toBe(431);
    expect(refused.head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(refused.body)).toMatchObject({ status: 431, title: 'Request Header Fields Too Large' });
    expect(seen.length).toBe(count);

    const accepted = await raw(base, request(MAX_HEADER_LINES - 8));
    expect(accepted.status).toBe(200);
    expect(last().event.headers).toMatchObject({
      'ce-id': '1',
      'ce-source': '/s',
      'ce-type': 't',
      'ce-specversion': '1.0',
    });
  });

  it("review #12: what Node's HTTP parser refuses gets problem+json, not an empty 400: bare LF, broken framing, oversized headers", async () => {
    const count = seen.length;
    const cases: [string, string[], number][] = [
      ['bare LF', ['POST /events HTTP/1.1\nHost: koerier\nContent-Length: 0\n\n'], 400],
      [
        'Content-Length with chunked',
        ['POST /events HTTP/1.1\r\nHost: koerier\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
        400,
      ],
      [
        'bad chunk size',
        ['POST /events HTTP/1.1\r\nHost: koerier\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'],
        400,
      ],
      ['not HTTP', ['\u0000\u0001 hello\r\n\r\n'], 400],
      [
        'headers past maxHeaderSize',
        [`GET /events HTTP/1.1\r\nHost: koerier\r\nx-big: ${'b'.repeat(20_000)}\r\n\r\n`],
        431,
      ],
    ];
    for (const [name, chunks, status] of cases) {
      const answer = await raw(base, chunks);
      expect(answer.status, name).toBe(status);
      expect(answer.head, name).toMatch(/content-type: application\/problem\+json/i);
      expect(JSON.parse(answer.body), name).toMatchObject({ status, type: expect.stringMatching(ANY_PROBLEM_TYPE) });
    }
    expect(seen.length).toBe(count);
  });

  it('review #12: a client that aborts mid-body is an info line in the log, not a 500 or an error', async () => {
    const before = logs.length;
    const count = seen.length;
    await raw(
      base,
      [
        'POST /events HTTP/1.1\r\nHost: koerier\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"partial":',
      ],
      {
        abortAfterWrite: true,
      },
    );
    await eventually(
      () => `an abort line in ${logs.slice(before).join('\n')}`,
      () => logs.slice(before).some((line) => line.includes('client aborted')),
      { timeoutMs: 5000, intervalMs: 20 },
    );
    const lines = logs
      .slice(before)
      .map((line) => JSON.parse(line) as { level: string; status?: number; message: string });
    expect(lines.filter((line) => line.level !== 'info')).toEqual([]);
    expect(lines.some((line) => line.status === 500)).toBe(false);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'info', message: 'client aborted the request' }));
    expect(seen.length).toBe(count);
  });

  it("review #12: HTTP/1.1 without Host, or any request with two, gets a 400 problem (RFC 9112 §3.2) from the host, not Node's empty 400; HTTP/1.0 without Host is served", async () => {
    const count = seen.length;
    for (const [name, bytes] of [
      ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n'],
      ['two Host lines', 'GET /health HTTP/1.1\r\nHost: koerier\r\nHost: other\r\nConnection: close\r\n\r\n'],
      ['HTTP/1.1 POST without Host', 'POST /events HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'],
    ]) {
      const answer = await raw(base, [bytes!]);
      expect(answer.status, name).toBe(400);
      expect(answer.head, name).toMatch(/content-type: application\/problem\+json/i);
      expect(answer.head, name).toMatch(/apigw-requestid: /i);
      expect(JSON.parse(answer.body), name).toMatchObject({
        status: 400,
        type: problemTypeUri('invalid-host'),
        detail: expect.stringContaining('Host'),
      });
    }
    expect(seen.length).toBe(count);
    const old = await raw(base, ['GET /health HTTP/1.0\r\n\r\n']);
    expect(/^HTTP\/1\.[01] 200/.test(old.head)).toBe(true);
  });

  it('review #12: CONNECT gets a 405 problem+json with Allow and the connection is closed, instead of a silent close', async () => {
    const count = seen.length;
    const answer = await raw(base, ['CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n']);
    expect(answer.status).toBe(405);
    expect(answer.head).toMatch(/content-type: application\/problem\+json/i);
    expect(answer.head).toMatch(/^allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS$/im);
    expect(JSON.parse(answer.body)).toMatchObject({
      status: 405,
      type: problemTypeUri('method-not-allowed'),
      detail: expect.stringContaining('CONNECT'),
    });
    expect(seen.length).toBe(count);
    expect((await send(base, 'GET', '/health')).status).toBe(200);
  });

  it("review #12: an Expect other than 100-continue gets a 417 problem+json, not Node's empty 417, and no function runs", async () => {
    const count = seen.length;
    const answer = await raw(base, [
      'POST /events HTTP/1.1\r\nHost: koerier\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}',
    ]);
    expect(answer.status).toBe(417);
    expect(answer.head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(answer.body)).toMatchObject({
      status: 417,
      type: problemTypeUri('expectation-failed'),
      title: 'Expectation Failed',
    });
    expect(seen.length).toBe(count);
    // 100-continue still works as before.
    const continued = await raw(base, [
      'POST /events HTTP/1.1\r\nHost: koerier\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    ]);
    expect(continued.head).toMatch(/^HTTP\/1\.1 100 Continue/);
    expect(seen.length).toBe(count + 1);
  });

  it('review #12: a client that half-closes its socket after a complete request still gets its answer, then the connection is closed', async () => {
    const count = seen.length;
    // The function answers after 200 ms; the client's FIN arrives long before that.
    const answer = await raw(
      base,
      ['POST /after-a-while HTTP/1.1\r\nHost: koerier\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nbody'],
      {
        halfCloseAfterWrite: true,
      },
    );
    expect(answer.status).toBe(202);
    expect(answer.body).toBe('took body');
    expect(seen.length).toBe(count + 1);
    // Keep-alive without Connection: close: the server still closes once the answer is out (raw() resolves on close).
    const second = await raw(base, ['GET /health HTTP/1.1\r\nHost: koerier\r\n\r\n'], { halfCloseAfterWrite: true });
    expect(second.status).toBe(200);
  });

  it('serves local routes itself and answers a wrong method there with 405 and Allow', async () => {
    const count = seen.length;
    const health = await send(base, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body.toString())).toEqual({ status: 'ok' });
    const wrongMethod = await send(base, 'POST', '/health');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers['allow']).toBe('GET');
    expect(seen.length).toBe(count); // no function saw either request
  });

  it('logs one JSON line per request with method, path (no query), status and duration', async () => {
    await send(base, 'GET', '/subscriptions/7?token=secret-in-query');
    const line = logs
      .map((entry) => JSON.parse(entry))
      .filter((entry) => entry.message === 'request')
      .at(-1);
    expect(line).toMatchObject({
      method: 'GET',
      path: '/subscriptions/7',
      status: 200,
      routeKey: 'GET /subscriptions/{id}',
    });
    expect(typeof line.ms).toBe('number');
    expect(logs.join('\n')).not.toContain('secret-in-query');
  });
});
