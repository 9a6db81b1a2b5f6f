/**
 * A real local HTTP server standing in for an AWS service that has no emulator here (KMS), for the
 * SDK client to talk to: each request is read whole and handed, with its body as text, to the
 * test's `answer`, which records what it needs and answers as the service would.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AwsServiceStub {
  /** `http://127.0.0.1:<port>`, the endpoint to give the client. */
  readonly endpoint: string;
  close(): Promise<void>;
}

export async function startAwsServiceStub(
  answer: (request: IncomingMessage, response: ServerResponse, body: string) => void,
): Promise<AwsServiceStub> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => answer(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
