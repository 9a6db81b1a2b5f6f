/**
 * Stored events — the JSON format texts Koerier keeps — read back for the router and filters.
 */
import { acceptedEvent, type AcceptedEvent } from './accepted-event.js';
import type { Attributes } from './event-validation.js';

/** Reads an event that Koerier validated earlier; null members are unset (JSON-1). */
export function readStoredEvent(json: string): AcceptedEvent {
  return acceptedEvent(attributesOf(JSON.parse(json) as Record<string, unknown>), json);
}

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
