/** One CloudEvent as Koerier keeps it: the JSON event format text plus its context attributes. */
import type { Attributes } from './event-validation.js';

export interface AcceptedEvent {
  readonly id: string;
  readonly source: string;
  readonly type: string;
  /**
   * The event in the JSON event format (application/cloudevents+json): context attributes and
   * extensions exactly as received (CE-13), data unchanged. A single structured request keeps
   * the request body text byte for byte; a batch member keeps its own slice of the batch text;
   * a binary request is rebuilt from its ce- headers (percent-decoded) with its body as `data`
   * (JSON spliced in verbatim, decodable text as a string) or else as `data_base64`.
   */
  readonly json: string;
  /** Context attributes incl. extensions, without data/data_base64: for logs, routing, filters. */
  readonly attributes: Readonly<Attributes>;
}

/** `attributes` must hold the REQUIRED string attributes (a validated or a stored event). */
export function acceptedEvent(attributes: Attributes, json: string): AcceptedEvent {
  return {
    id: attributes['id'] as string,
    source: attributes['source'] as string,
    type: attributes['type'] as string,
    json,
    attributes,
  };
}
