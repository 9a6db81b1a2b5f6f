/**
 * Stored events — the JSON format texts Koerier keeps — read back for the router and filters
 * (event-text.ts reads them; this is what it and the claim check keep of a parsed one).
 */
import type { Attributes } from './event-validation.js';

/** The context attributes of a stored event: every member but the data, null members unset (JSON-1). */
export function attributesOf(event: Record<string, unknown>): Attributes {
  const attributes: Attributes = {};
  for (const name in event) {
    const value = event[name];
    if (value === null || name === 'data' || name === 'data_base64') continue;
    attributes[name] = value as Attributes[string];
  }
  return attributes;
}
