/**
 * HTTP/1.1 over a bare `node:net` socket, for tests that must send bytes no HTTP client would:
 * header values with control characters or raw non-UTF-8 bytes, thousands of header lines, bad
 * framing, bodies shorter than their Content-Length, clients that give up mid-body.
 *
 *   const outcome = await sendRaw(port, Buffer.from('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
 *   if (outcome.kind === 'response') console.log(outcome.status, outcome.headers['content-type'], outcome.body.toString());
 *
 * One connection per call. The answer is read until it is complete (Content-Length, chunked, or
 * the server closing); interim 1xx answers (`100 Continue`) are skipped. What the socket did when
 * no answer came is reported as an outcome, never thrown, so a caller can count it.
 */
import { connect } from 'node:net';

export interface RawResponse {
  readonly kind: 'response';
  readonly status: number;
  /** Names lower-cased; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** Bytes of the answer's body as the server sent them (the body may be cut to `keepBodyBytes`). */
  readonly bodyBytes: number;
}

/** No answer: `error` (ECONNRESET, EPIPE, …), `closed` (closed without a byte of answer), `timeout`, `garbled` (not HTTP). */
export interface RawFailure {
  readonly kind: 'error' | 'closed' | 'timeout' | 'garbled';
  readonly detail: string;
}

export type RawOutcome = RawResponse | RawFailure;

export interface RawOptions {
  /** Give up after this long without a complete answer. Default 30 s. */
  readonly timeoutMs?: number;
  /** The request was a HEAD: the answer has no body whatever its Content-Length says. */
  readonly head?: boolean;
  /**
   * Write the bytes, then: `keep-open` leaves the socket open (the default; send `Connection:
   * close` to have the server end it), `end` half-closes it (a Node server may then drop its
   * answer), `destroy` cuts it at once (a client that gives up).
   */
  readonly afterWrite?: 'end' | 'keep-open' | 'destroy';
  /** Keep at most this many bytes of the body (the rest is counted, not kept). Default 1 MiB. */
  readonly keepBodyBytes?: number;
}

export function sendRaw(port: number, bytes: Buffer, options: RawOptions = {}): Promise<RawOutcome> {
  const { timeoutMs = 30_000, head = false, afterWrite = 'keep-open', keepBodyBytes = 1024 * 1024 } = options;
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const reader = new ResponseReader(head, keepBodyBytes);
    let settled = false;
    const settle = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => settle({ kind: 'timeout', detail: `no complete answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    socket.on('connect', () => {
      if (afterWrite === 'destroy') {
        socket.write(bytes, () => settle({ kind: 'closed', detail: 'the client cut the connection' }));
        return;
      }
      if (afterWrite === 'end') socket.end(bytes);
      else socket.write(bytes);
    });
    socket.on('data', (chunk: Buffer) => {
      const outcome = reader.push(chunk);
      if (outcome) settle(outcome);
    });
    socket.on('end', () => settle(reader.finish()));
    socket.on('close', () => settle(reader.finish()));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A server may answer and then reset a connection whose request it did not read to the end.
      const outcome = reader.finishIfComplete();
      settle(outcome ?? { kind: 'error', detail: error.code ?? error.message });
    });
  });
}

/** Builds a request's bytes: request line, header lines, blank line, body. Values may be raw bytes. */
export function requestBytes(
  method: string,
  target: string,
  headers: readonly (readonly [string, string | Buffer])[],
  body: Buffer = Buffer.alloc(0),
): Buffer {
  const parts: Buffer[] = [Buffer.from(`${method} ${target} HTTP/1.1\r\n`, 'latin1')];
  for (const [name, value] of headers) {
    parts.push(
      Buffer.from(`${name}: `, 'latin1'),
      typeof value === 'string' ? Buffer.from(value, 'latin1') : value,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from('\r\n'), body);
  return Buffer.concat(parts);
}

class ResponseReader {
  /** Bytes before the head is parsed (small), then the body's chunks as they came. */
  private pending = Buffer.alloc(0);
  private head?: { status: number; headers: Record<string, string> };
  private bodyChunks: Buffer[] = [];
  private bodyLength = 0;

  constructor(
    private readonly headRequest: boolean,
    private readonly keepBodyBytes: number,
  ) {}

  /** An outcome once the answer is complete, else undefined. */
  push(chunk: Buffer): RawOutcome | undefined {
    if (this.head) {
      this.bodyChunks.push(chunk);
      this.bodyLength += chunk.length;
    } else {
      this.pending = Buffer.concat([this.pending, chunk]);
    }
    return this.complete();
  }

  finish(): RawOutcome {
    const complete = this.complete();
    if (complete) return complete;
    if (!this.head && this.pending.length === 0)
      return { kind: 'closed', detail: 'the server closed the connection without answering' };
    if (!this.head)
      return {
        kind: 'garbled',
        detail: `not an HTTP answer: ${JSON.stringify(this.pending.subarray(0, 200).toString('latin1'))}`,
      };
    // Close-delimited body (no Content-Length, not chunked): the close completes it.
    const { headers, status } = this.head;
    if (headers['content-length'] === undefined && !/chunked/i.test(headers['transfer-encoding'] ?? ''))
      return this.response(Buffer.concat(this.bodyChunks));
    return { kind: 'closed', detail: `the server closed the connection mid-answer (status ${status})` };
  }

  finishIfComplete(): RawOutcome | undefined {
    return this.complete();
  }

  private complete(): RawOutcome | undefined {
    while (!this.head) {
      const end = this.pending.indexOf('\r\n\r\n');
      if (end === -1) return undefined;
      const lines = this.pending.subarray(0, end).toString('latin1').split('\r\n');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
      if (!match)
        return {
          kind: 'garbled',
          detail: `not an HTTP status line: ${JSON.stringify((lines[0] ?? '').slice(0, 200))}`,
        };
      const status = Number(match[1]);
      const rest = this.pending.subarray(end + 4);
      if (status >= 100 && status < 200 && status !== 101) {
        this.pending = rest;
        continue;
      }
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
      }
      this.head = { status, headers };
      this.bodyChunks = rest.length > 0 ? [rest] : [];
      this.bodyLength = rest.length;
    }
    const { status, headers } = this.head;
    if (this.headRequest || status === 204 || status === 304) return this.response(Buffer.alloc(0));
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const last = this.bodyChunks.at(-1);
      if (!last || !Buffer.concat(this.bodyChunks.slice(-2)).subarray(-5).equals(Buffer.from('0\r\n\r\n')))
        return undefined;
      const body = dechunk(Buffer.concat(this.bodyChunks));
      return body ? this.response(body) : undefined;
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      const expected = Number(length);
      return this.bodyLength >= expected
        ? this.response(Buffer.concat(this.bodyChunks).subarray(0, expected))
        : undefined;
    }
    return undefined;
  }

  private response(body: Buffer): RawResponse {
    const { status, headers } = this.head!;
    return {
      kind: 'response',
      status,
      headers,
      body: body.length > this.keepBodyBytes ? Buffer.from(body.subarray(0, this.keepBodyBytes)) : body,
      bodyBytes: body.length,
    };
  }
}

/** The body of a complete chunked message, or undefined while chunks are missing. */
function dechunk(data: Buffer): Buffer | undefined {
  const chunks: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1').split(';')[0] ?? '', 16);
    if (Number.isNaN(size)) return Buffer.concat(chunks);
    if (size === 0) return Buffer.concat(chunks);
    if (data.length < lineEnd + 2 + size + 2) return undefined;
    chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
