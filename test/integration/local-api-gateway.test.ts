import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionSpec } from '../../lib/resources.js';
import { createApiGateway, MAX_REQUEST_BYTES, type ApiGateway } from '../../local/api-gateway.js';
import type { LoadedFunction } from '../../local/lambda-runtime.js';

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
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, key === 'headers' || key === 'queryStringParameters' || key === 'pathParameters' ? 'map' : shapeOf(member)]).sort());
  }
  return typeof value;
}

interface Invocation {
  readonly event: APIGatewayProxyEventV2;
  readonly context: Context;
}

function testFunction(name: string, spec: Partial<FunctionSpec>, handler: (event: APIGatewayProxyEventV2) => Promise<unknown>, seen: Invocation[]): LoadedFunction {
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
function send(base: string, method: string, target: string, headers: [string, string][] = [], body?: Buffer | string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: target, headers: [['Host', url.host], ...headers].flat() as unknown as Record<string, string> }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('API Gateway HTTP API emulation (payload format 2.0)', () => {
  const seen: Invocation[] = [];
  const logs: string[] = [];
  let gateway: ApiGateway;
  let base: string;
  const last = () => seen.at(-1) as Invocation;

  beforeAll(async () => {
    gateway = createApiGateway((line) => logs.push(line));
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
        testFunction('ingest', { routes: [{ method: 'POST', path: '/events' }, { method: 'OPTIONS', path: '/events' }] }, ok, seen),
        testFunction(
          'registry',
          { routes: [{ method: 'GET', path: '/subscriptions/{id}' }, { method: 'GET', path: '/subscriptions/mine' }, { method: 'GET', path: '/files/{path+}' }] },
          ok,
          seen,
        ),
        testFunction('fallback', { defaultRoute: true }, async () => ({ statusCode: 404, headers: { 'content-type': 'application/problem+json' }, body: '{"status":404}' }), seen),
        testFunction(
          'shapes',
          {
            routes: [
              { method: 'GET', path: '/structured' },
              { method: 'GET', path: '/plain' },
              { method: 'GET', path: '/throws' },
              { method: 'GET', path: '/slow' },
            ],
            timeoutSeconds: 1,
          },
          async (event) => {
            switch (event.rawPath) {
              case '/structured':
                return { statusCode: 201, headers: { 'x-count': 3, 'content-type': 'image/png' }, cookies: ['a=1; Path=/', 'b=2; HttpOnly'], body: Buffer.from([0, 1, 254, 255]).toString('base64'), isBase64Encoded: true };
              case '/plain':
                return { hello: 'world' };
              case '/throws':
                throw new Error('boom in the handler');
              default:
                return new Promise(() => undefined); // never settles: the 1 s timeout must end it
            }
          },
          seen,
        ),
      ],
      [{ method: 'GET', path: '/health', handle: async () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"status":"ok"}' }) }],
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
      http: { method: 'POST', path: '/events', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'koerier-test/1' },
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
    expect(last().event).toMatchObject({ routeKey: '$default', rawPath: '/nothing/here', requestContext: { routeKey: '$default' } });
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
    const failure = logs.map((line) => JSON.parse(line)).find((entry) => entry.message === 'function failed' && entry.routeKey === 'GET /throws');
    expect(failure).toMatchObject({ level: 'error', function: 'shapes', error: { name: 'Error', message: 'boom in the handler' } });
  });

  it('a handler that outlives its timeout ends as a 500, as a timed-out Lambda does', async () => {
    const response = await send(base, 'GET', '/slow');
    expect(response.status).toBe(500);
    const failure = logs.map((line) => JSON.parse(line)).find((entry) => entry.message === 'function failed' && entry.routeKey === 'GET /slow');
    expect(failure.error.message).toMatch(/timed out after 1\.00 seconds/);
  });

  it('refuses bodies over 10 MB with a 413 problem, and passes exactly 10 MB through', async () => {
    const tooLarge = await send(base, 'POST', '/events', [['Content-Type', 'application/octet-stream']], Buffer.alloc(MAX_REQUEST_BYTES + 1, 1));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(tooLarge.body.toString())).toMatchObject({ status: 413, title: 'Payload Too Large' });

    const count = seen.length;
    const atLimit = await send(base, 'POST', '/events', [['Content-Type', 'application/octet-stream']], Buffer.alloc(MAX_REQUEST_BYTES, 1));
    expect(atLimit.status).toBe(200);
    expect(seen.length).toBe(count + 1);
    expect(Buffer.from(last().event.body ?? '', 'base64').length).toBe(MAX_REQUEST_BYTES);
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
    const line = logs.map((entry) => JSON.parse(entry)).filter((entry) => entry.message === 'request').at(-1);
    expect(line).toMatchObject({ method: 'GET', path: '/subscriptions/7', status: 200, routeKey: 'GET /subscriptions/{id}' });
    expect(typeof line.ms).toBe('number');
    expect(logs.join('\n')).not.toContain('secret-in-query');
  });
});
