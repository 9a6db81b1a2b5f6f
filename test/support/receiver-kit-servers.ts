/**
 * The receiver kit (receiver/, issue 30 item 6) served as a user would under each framework it
 * claims to serve, and a recording proxy to put in front of one: it forwards every request as it
 * came (Host included, so the URL the kit sees is the sink Koerier signed), records the request and
 * the kit's answer, and can lose the next answers (the connection dropped after the kit answered),
 * which makes Koerier retry a delivery the receiver already handled.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { expressHandler, fastifyReceiver, honoHandler, nodeHandler, type Receiver } from '../../receiver/src/index.js';

export const FRAMEWORKS = ['node:http', 'express', 'fastify', 'hono'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export interface Served {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  close(): Promise<void>;
}

/** The receiver at `/hook` of a server built with `framework`. */
export async function serveReceiver(framework: Framework, receiver: Receiver): Promise<Served> {
  switch (framework) {
    case 'node:http':
      return listening(createServer(nodeHandler(receiver)));
    case 'express': {
      const app = express();
      // An application's own JSON routes beside the hook: the parser must not reach the hook's body.
      app.use('/api', express.json());
      app.all('/hook', expressHandler(receiver));
      return listening(createServer(app));
    }
    case 'fastify': {
      const app = Fastify();
      await app.register(fastifyReceiver(receiver, { path: '/hook' }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      return { origin: `http://127.0.0.1:${port}`, close: () => app.close() };
    }
    case 'hono': {
      const app = new Hono();
      app.all('/hook', honoHandler(receiver));
      const server = await new Promise<Server>((resolve) => {
        // Not replacing the process's global Request and Response with Hono's own (its default): the test's fetch uses them.
        const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', overrideGlobalObjects: false }, () =>
          resolve(started as Server),
        );
      });
      const { port } = server.address() as AddressInfo;
      return { origin: `http://127.0.0.1:${port}`, close: () => closed(server) };
    }
  }
}

export interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly answer: { readonly status: number; readonly headers: Record<string, string>; readonly body: string };
  /** The answer never reached the caller. */
  readonly lost: boolean;
}

export interface RecordingProxy extends Served {
  readonly exchanges: Exchange[];
  /**
   * Drop the connection, instead of answering, after the target answered the next POST whose body
   * holds `marker` (an event id): only that delivery, whatever else Koerier sends meanwhile.
   */
  loseNextAnswerTo(marker: string): void;
}

export async function recordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: Exchange[] = [];
  const toLose = new Set<string>();
  const server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      const headers = flat(req.headers);
      const answer = await forward(`${target}${req.url ?? '/'}`, req.method ?? 'GET', headers, body);
      const text = body.toString();
      const marker = req.method === 'POST' ? [...toLose].find((candidate) => text.includes(candidate)) : undefined;
      const lost = marker !== undefined && toLose.delete(marker);
      exchanges.push({ method: req.method ?? '', path: req.url ?? '/', headers, body: text, answer, lost });
      if (lost) return void req.socket.destroy();
      const { 'transfer-encoding': _chunked, connection: _connection, ...passed } = answer.headers;
      res.writeHead(answer.status, passed).end(answer.body);
    })();
  });
  const served = await listening(server);
  return {
    ...served,
    exchanges,
    loseNextAnswerTo(marker) {
      toLose.add(marker);
    },
  };
}

function forward(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<Exchange['answer']> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method, headers }, (incoming) => {
      void read(incoming).then((answer) =>
        resolve({ status: incoming.statusCode ?? 0, headers: flat(incoming.headers), body: answer.toString() }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function listening(server: Server): Promise<Served> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => closed(server) };
}

function closed(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function read(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function flat(headers: IncomingMessage['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) record[name] = Array.isArray(value) ? value.join(', ') : value;
  return record;
}
