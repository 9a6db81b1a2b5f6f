/**
 * How the lean AWS clients (./s3-requests.ts, ./kms-requests.ts) put a signed request on the wire: node:http(s) with
 * kept-alive connections, as the SDK's handler keeps them, and which failures are a broken
 * connection worth another attempt.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** A request as it goes on the wire: what a transport sends and tests capture. */
export interface AwsHttpRequest {
  readonly method: string;
  readonly protocol: 'http:' | 'https:';
  readonly hostname: string;
  readonly port?: number;
  /** URI-encoded. */
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}

export interface AwsHttpResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string | undefined>;
  readonly body: Buffer;
}

export type AwsTransport = (request: AwsHttpRequest) => Promise<AwsHttpResponse>;

/** One kept-alive agent per protocol, 50 sockets as the SDK's handler allows; the whole answer read into memory (Koerier's objects are single events or archive chunks). */
export class NodeTransport {
  private readonly agents: { http?: HttpAgent; https?: HttpsAgent } = {};

  send(request: AwsHttpRequest): Promise<AwsHttpResponse> {
    const secure = request.protocol === 'https:';
    const agent = secure
      ? (this.agents.https ??= new HttpsAgent({ keepAlive: true, maxSockets: 50 }))
      : (this.agents.http ??= new HttpAgent({ keepAlive: true, maxSockets: 50 }));
    const search = new URLSearchParams(request.query).toString().replace(/\+/g, '%20');
    return new Promise((resolve, reject) => {
      const outgoing = (secure ? httpsRequest : httpRequest)(
        {
          method: request.method,
          hostname: request.hostname,
          port: request.port,
          path: search ? `${request.path}?${search}` : request.path,
          headers: request.headers,
          agent,
        },
        (incoming: IncomingMessage) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('error', reject);
          incoming.on('end', () => {
            const headers: Record<string, string | undefined> = {};
            for (const [name, value] of Object.entries(incoming.headers)) headers[name] = Array.isArray(value) ? value.join(',') : value;
            resolve({ statusCode: incoming.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
          });
        },
      );
      outgoing.on('error', reject);
      outgoing.end(request.body);
    });
  }

  destroy(): void {
    this.agents.http?.destroy();
    this.agents.https?.destroy();
  }
}

/** The SDK's transient network errors: reset, refused, timed out, unreachable, unresolved. */
export function isBrokenConnection(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code !== undefined && ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code);
}
