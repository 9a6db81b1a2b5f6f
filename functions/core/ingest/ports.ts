/**
 * What the ingest use case needs from the world, as ports: the AWS adapters implement them in
 * functions/aws (DynamoDbRateWindow, SqsEventQueue), and ./memory-adapters.ts in memory for unit
 * tests without emulators.
 */

export type RateDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

/**
 * Requests per publisher per minute, shared by every container (WH-7, EDU-20: per producer, not
 * per address). `take` counts one request of `clientId`, or refuses it once `limitPerMinute` are
 * counted in the current window.
 */
export interface RateWindow {
  take(clientId: string, limitPerMinute: number): Promise<RateDecision>;
}

/** One event on its way to the router: the JSON event format text and its message attributes. */
export interface InboundMessage {
  readonly body: string;
  readonly attributes?: Readonly<Record<string, string>>;
}

/**
 * The inbound queue. `send` resolves only once every message is stored and throws otherwise, so
 * the caller never acknowledges an event that is not stored (EDU-19).
 */
export interface InboundQueue {
  send(messages: readonly InboundMessage[]): Promise<void>;
}
