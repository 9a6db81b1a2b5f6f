/**
 * @koerier/receiver: receive Koerier's webhook deliveries in Node. The protocol a receiver in any
 * language implements, with test vectors, is docs/RECEIVERS.md of the Koerier repository.
 */
export { createReceiver, type Delivery, type HandlerAnswer, type Receiver, type ReceiverOptions } from './receiver.js';
export type { HandshakeOptions, ValidationOffer } from './handshake.js';
export { staticToken, type JwksTokenCheck, type TokenCheck, type TokenCheckFunction } from './bearer-token.js';
export { KEY_DIRECTORY_PATH, type SignatureOptions } from './message-signature.js';
export { memoryDeduplicationStore, DEFAULT_KEY_TTL_SECONDS, type DeduplicationStore } from './deduplication.js';
export type { CloudEvent, ContentMode } from './cloudevents.js';
export type { ReceivedRequest, ReceiverAnswer } from './messages.js';
export { nodeHandler, type NodeAdapterOptions } from './adapters/node.js';
export { expressHandler } from './adapters/express.js';
export { fastifyReceiver, type FastifyReceiverOptions } from './adapters/fastify.js';
export { honoHandler } from './adapters/hono.js';
