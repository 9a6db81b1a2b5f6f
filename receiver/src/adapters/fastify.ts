/**
 * Fastify 4 and 5, as a plugin: in its own encapsulated context it takes every body as raw bytes
 * (Fastify would refuse `application/cloudevents+json` with 415, and parse JSON, which loses the
 * bytes the digest covers) and routes every method of `path` to the receiver:
 *   await app.register(fastifyReceiver(receiver, { path: '/hook' }));
 */
import type { FastifyInstance } from 'fastify';
import type { Receiver } from '../receiver.js';

export interface FastifyReceiverOptions {
  readonly path: string;
  /** The largest body accepted (bytes; default 1 MiB). */
  readonly bodyLimit?: number;
}

export function fastifyReceiver(
  receiver: Receiver,
  options: FastifyReceiverOptions,
): (instance: FastifyInstance) => Promise<void> {
  return async (instance) => {
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: options.bodyLimit ?? 1024 * 1024 },
      (_request, body, done) => done(null, body),
    );
    instance.all(options.path, async (request, reply) => {
      const secure = (request.raw.socket as { encrypted?: boolean }).encrypted;
      const answer = await receiver.handle({
        method: request.method,
        url: `${secure ? 'https' : 'http'}://${request.headers.host ?? 'localhost'}${request.raw.url ?? '/'}`,
        headers: request.headers,
        body: request.body instanceof Uint8Array ? request.body : new Uint8Array(0),
      });
      return reply
        .code(answer.status)
        .headers(answer.headers)
        .send(answer.body === '' ? undefined : answer.body);
    });
  };
}
