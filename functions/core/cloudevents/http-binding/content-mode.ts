/** The three content modes of the CloudEvents HTTP binding (HTTP-1..3); also how a subscription takes deliveries (HTTP-4). */
export type ContentMode = 'structured' | 'binary' | 'batch';

export const CONTENT_MODES: readonly ContentMode[] = ['structured', 'binary', 'batch'];
