/**
 * A real HTTP proxy in front of the gateway that loses one answer: every request goes through to
 * `upstream` and its answer comes back, except the one `drop` picks, which the client gets as a 503
 * with `Retry-After: 1` although the gateway did act on it, as when a load balancer loses the
 * gateway's answer. What EDU-IDEM asks of a client (the CLI): send it again after Retry-After with
 * the same Idempotency-Key, so the gateway replays its stored answer instead of acting twice.
 *
 *   const proxy = await startAnswerDroppingProxy(koerier.url, { watch: (method) => method === 'PUT', drop: (seen) => seen.length === 1 });
 *   ... run the CLI with KOERIER_URL = proxy.url, then read proxy.seen ...
 *   await proxy.close();
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A watched request as the gateway answered it. */
export interface ProxiedRequest {
  readonly key: string;
  readonly status: number;
  /** Whether the gateway replayed a stored answer (`Idempotent-Replayed: true`). */
  readonly replayed: boolean;
}

export interface AnswerDroppingProxy {
  readonly url: string;
  /** The watched requests so far, in the order the gateway answered them. */
  readonly seen: readonly ProxiedRequest[];
  close(): Promise<void>;
}

export async function startAnswerDroppingProxy(
  upstream: string,
  options: {
    /** Which requests are recorded in `seen` and may be dropped. */
    readonly watch: (method: string, url: string) => boolean;
    /** Called with `seen` once a watched request's answer is in it (last): whether to drop that answer. */
    readonly drop: (seen: readonly ProxiedRequest[]) => boolean;
  },
): Promise<AnswerDroppingProxy> {
  const seen: ProxiedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const method = req.method ?? 'GET';
        const url = req.url ?? '/';
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
        ) as Record<string, string>;
        const answer = await fetch(`${upstream}${url}`, {
          method,
          headers,
          ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
        });
        const body = Buffer.from(await answer.arrayBuffer());
        if (options.watch(method, url)) {
          seen.push({
            key: headers['idempotency-key'] ?? '',
            status: answer.status,
            replayed: answer.headers.get('idempotent-replayed') === 'true',
          });
          if (options.drop(seen))
            return void res
              .writeHead(503, { 'retry-after': '1', 'content-type': 'application/problem+json' })
              .end('{"status":503}');
        }
        res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
