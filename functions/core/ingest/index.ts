export { acceptEvents, inboundMessageAttributes, INGEST_OPERATION, MAX_EVENTS_PER_BATCH, type IngestDependencies, type IngestSettings } from './accept-events.js';
export { acceptedAnswer } from './accepted-answer.js';
export type { InboundMessage, InboundQueue, IngestLog, RateDecision, RateWindow } from './ports.js';
