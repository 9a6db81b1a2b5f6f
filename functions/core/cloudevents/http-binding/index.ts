/**
 * The CloudEvents HTTP protocol binding, both directions: requests read in the three content
 * modes (parse-request.ts, parse-binary.ts) and deliveries written in them (to-message.ts).
 */
export { CONTENT_MODES, type ContentMode } from './content-mode.js';
export { parseCloudEventsRequest } from './parse-request.js';
export type { ParseOptions, ParsedEvents } from './parse-results.js';
export { toBatchMessage, toBinaryMessage, toStructuredMessage } from './to-message.js';
