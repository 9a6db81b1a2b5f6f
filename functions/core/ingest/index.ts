export {
  acceptEvents,
  inboundMessageAttributes,
  INGEST_OPERATION,
  MAX_EVENTS_PER_BATCH,
  type IngestDependencies,
  type IngestSettings,
} from './accept-events.js';
export { groupedWarnings } from './grouped-warnings.js';
export type { InboundMessage, InboundQueue, RateDecision, RateWindow } from './ports.js';
