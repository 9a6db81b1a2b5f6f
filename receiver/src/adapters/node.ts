/**
 * node:http (and anything built on its IncomingMessage/ServerResponse, Express among them):
 *   createServer(nodeHandler(receiver)).listen(8080);
 * The body is read from the request stream, or taken from `req.body` when a body parser left the
 * raw bytes there (`express.raw({ type: '*\/*' })`); a parsed JSON body cannot be verified or
 * deduplicated byte for byte, so it is refused with an error saying so.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Receiver } from '../receiver.js';
import type { ReceiverAnswer } from '../messages.js';

export interface NodeAdapterOptions {
  /** The largest body read (bytes; default 1 MiB: Koerier's deliveries are at most 256 KiB plus headers). */
  readonly maxBodyBytes?: number;
}

export function nodeHandler(
  receiver: Receiver,
  options: NodeAdapterOptions = {},
): (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  return (req, res, next) => {
    const respond = async () => {
      const body = await requestBody(req, maxBodyBytes);
      if (body === 'too-large') {
        res.writeHead(413, { connection: 'close' }).end();
        return;
      }
      writeAnswer(
        res,
        await receiver.handle({ method: req.method ?? 'GET', url: requestUrl(req), headers: req.headers, body }),
      );
    };
    respond().catch((error: unknown) => {
      if (next) return next(error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
}

/** The URL the request was made to: scheme from the socket, authority from Host, path as sent (Express's originalUrl under a mounted router). */
export function requestUrl(req: IncomingMessage): string {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const path = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  return `${scheme}://${req.headers.host ?? 'localhost'}${path}`;
}

export function writeAnswer(res: ServerResponse, answer: ReceiverAnswer): void {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body === '' ? undefined : answer.body);
}

async function requestBody(req: IncomingMessage, maxBytes: number): Promise<Uint8Array | 'too-large'> {
  const parsed = (req as { body?: unknown }).body;
  if (parsed instanceof Uint8Array) return parsed;
  if (typeof parsed === 'string') return new TextEncoder().encode(parsed);
  if (parsed !== undefined && req.readableEnded)
    throw new Error(
      '@koerier/receiver needs the raw body: mount it before express.json() or give it express.raw({ type: "*/*" })',
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return 'too-large';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
