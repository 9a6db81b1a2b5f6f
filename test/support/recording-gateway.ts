/**
 * A gateway that is not the one the CLI logged in to: a real HTTP server whose API description
 * (`…/openapi.json`) names whatever token URL the test chooses, whose `/oauth/token` hands out a
 * token to anyone, and which records every request it gets — so a test can show that no client
 * secret, and no token, reached it (issue 28 item 10). With `forwardTo` it is a proxy in front of a
 * real host instead, passing on everything but the description it is told to replace.
 *
 *   const evil = await startRecordingGateway({ names: (self) => `${self.origin}/oauth/token` });
 *   await cli.run(['send', 'event.json', '--url', evil.url]);
 *   expect(evil.requests).toEqual([]);
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

export interface RecordingGateway {
  /** `http://<host>:<port>`. */
  readonly origin: string;
  /** The base URL a CLI is pointed at, `<origin>/v1`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** From now on, the API description names this token URL (undefined: forwarded, or 404 without `forwardTo`). */
  namesTokenUrl(tokenUrl: string | undefined): void;
  close(): Promise<void>;
}

/**
 * An address of this machine that is not loopback (the first external IPv4 address), where a
 * server listening on 0.0.0.0 is reached over plain HTTP as any remote host would be; undefined
 * on a machine without one.
 */
export function nonLoopbackAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    const external = addresses?.find((address) => address.family === 'IPv4' && !address.internal);
    if (external) return external.address;
  }
  return undefined;
}

export async function startRecordingGateway(
  options: { names?: (self: { origin: string }) => string; host?: string; forwardTo?: string } = {},
): Promise<RecordingGateway> {
  const requests: RecordedRequest[] = [];
  let tokenUrl: string | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => void answer(req, res, Buffer.concat(chunks)));
  });
  const answer = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const path = req.url ?? '/';
    requests.push({
      method: req.method ?? 'GET',
      path,
      authorization: req.headers.authorization,
      body: body.toString('utf8'),
    });
    const json = (status: number, value: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (path.endsWith('/openapi.json') && tokenUrl !== undefined) {
      return json(200, {
        openapi: '3.1.0',
        components: {
          securitySchemes: { oauth2: { type: 'oauth2', flows: { clientCredentials: { tokenUrl, scopes: {} } } } },
        },
      });
    }
    if (options.forwardTo) {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
      );
      const upstream = await fetch(`${options.forwardTo}${path}`, {
        method: req.method ?? 'GET',
        headers: headers as Record<string, string>,
        ...(body.length > 0 ? { body } : {}),
        redirect: 'manual',
      });
      const bytes = Buffer.from(await upstream.arrayBuffer());
      const passed = Object.fromEntries(
        [...upstream.headers].filter(
          ([name]) => !['content-length', 'content-encoding', 'transfer-encoding'].includes(name),
        ),
      );
      return res.writeHead(upstream.status, passed).end(bytes);
    }
    if (req.method === 'POST' && path === '/oauth/token')
      return json(200, { access_token: 'taken-by-the-wrong-gateway', token_type: 'Bearer', expires_in: 3600 });
    return json(404, { status: 404 });
  };
  const listenHost = options.host === undefined ? '127.0.0.1' : '0.0.0.0';
  await new Promise<void>((resolve) => server.listen(0, listenHost, resolve));
  const origin = `http://${options.host ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;
  tokenUrl = options.names?.({ origin });
  return {
    origin,
    url: `${origin}/v1`,
    requests,
    namesTokenUrl: (url) => (tokenUrl = url),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
