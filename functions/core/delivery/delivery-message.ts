/**
 * The message on the deliveries queue: one per (event or batch of events, subscription). The
 * router writes it, the delivery function sends it. Its `deliveryId` is fixed here, once, and is
 * the `Idempotency-Key` of every attempt (EDU-IDEM-9, EDU-IDEM-11).
 */
export interface DeliveryMessage {
  readonly version: 1;
  /** UUIDv4: the Idempotency-Key sent with every attempt of this delivery. */
  readonly deliveryId: string;
  readonly subscriptionId: string;
  /** Stored events in the JSON event format, exactly as accepted (CE-13). One, unless the
   * subscription takes batches (EDU-11, JSON-3). */
  readonly events: readonly string[];
  /** Epoch ms when the delivery was created: attempts stop when the key's lifetime from here has
   * passed (EDU-IDEM-12). */
  readonly createdAt: number;
  /** Set by a redrive: a new operation, so a new key (EDU-IDEM-13). */
  readonly redriveOf?: string;
}

export function encodeDeliveryMessage(message: DeliveryMessage): string {
  return JSON.stringify(message);
}

export function decodeDeliveryMessage(body: string): DeliveryMessage {
  const value = JSON.parse(body) as Partial<DeliveryMessage>;
  if (
    value.version !== 1 ||
    typeof value.deliveryId !== 'string' ||
    typeof value.subscriptionId !== 'string' ||
    !Array.isArray(value.events) ||
    !value.events.every((e) => typeof e === 'string') ||
    typeof value.createdAt !== 'number'
  ) {
    throw new TypeError('Not a Koerier delivery message');
  }
  return value as DeliveryMessage;
}
