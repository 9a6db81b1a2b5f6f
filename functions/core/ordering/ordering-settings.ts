/**
 * Ordered delivery per key (issue 33, docs/ORDERING.md): what a subscription asks for, and the
 * two things every hop reads of it — the key an event belongs to, and the `sequence` Koerier
 * stamps on it.
 *
 * The key is a context attribute of the event: the CloudEvents partitioning extension's
 * `partitionkey` by default ("events that need to be placed into the same bucket are done so by
 * using the same partition key", cloudevents/extensions/partitioning.md), `subject`, or any
 * extension attribute the publishers agree on (a pupil's, a case's or a dossier's number).
 */
import type { Attributes } from '../cloudevents/event-validation.js';

/** What happens to events of a key whose event could not be delivered (docs/ORDERING.md, "Failure policies"). */
export type OrderingFailurePolicy = 'block' | 'park' | 'skip';
/** An event that lacks the key: delivered outside any order, or refused at the ingest. */
export type WithoutKeyPolicy = 'unordered' | 'refuse';

export interface OrderingSettings {
  /** The context attribute whose value is the key: `partitionkey`, `subject` or an extension's name. */
  readonly key: string;
  readonly withoutKey: WithoutKeyPolicy;
  readonly onFailure: OrderingFailurePolicy;
}

export const ORDERING_FAILURE_POLICIES: readonly OrderingFailurePolicy[] = ['block', 'park', 'skip'];
export const WITHOUT_KEY_POLICIES: readonly WithoutKeyPolicy[] = ['unordered', 'refuse'];

/** The partitioning extension's attribute: the key when the subscription names none. */
export const DEFAULT_ORDERING_KEY = 'partitionkey';
export const DEFAULT_ORDERING: OrderingSettings = {
  key: DEFAULT_ORDERING_KEY,
  withoutKey: 'unordered',
  onFailure: 'block',
};

/**
 * Attributes that cannot be a key: each event has its own `id`, and `source`, `type`,
 * `specversion`, `time` and the data's description say nothing about which thing the event is
 * about. `sequence` is what Koerier stamps, so it cannot order by it as well.
 */
export const NOT_A_KEY: readonly string[] = [
  'id',
  'source',
  'specversion',
  'type',
  'time',
  'datacontenttype',
  'dataschema',
  'data',
  'data_base64',
  'sequence',
  'sequencetype',
];

/**
 * The event's key under these settings, or undefined when the event has none: the attribute is
 * absent, null, or not a non-empty string (the partitioning extension: "MUST be a non-empty
 * string"). Other scalar types are read as their canonical string, as the extension's value is a
 * String and JSON may carry an Integer or Boolean extension.
 */
export function orderingKeyOf(
  attributes: Readonly<Attributes>,
  settings: Pick<OrderingSettings, 'key'>,
): string | undefined {
  const value = attributes[settings.key];
  if (typeof value === 'string') return value.length > 0 ? value : undefined;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Digits of a stamped sequence: 10, so ten thousand million events per key still sort as text. */
export const SEQUENCE_DIGITS = 10;
export const MAX_SEQUENCE = 10 ** SEQUENCE_DIGITS - 1;

/**
 * The `sequence` extension's value for the n-th event (from 1) of a (subscription, key): zero-padded,
 * so that comparing the strings compares the numbers (cloudevents/extensions/sequence.md: "a
 * receiver can determine the order of the events via a simple string-compare", "it might be
 * necessary for the value to include some kind of padding").
 */
export function formatSequence(n: number): string {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_SEQUENCE) throw new RangeError(`no sequence for ${n}`);
  return String(n).padStart(SEQUENCE_DIGITS, '0');
}

/** The number a stamped `sequence` holds, or undefined when the text is not one Koerier stamped. */
export function parseSequence(text: unknown): number | undefined {
  if (typeof text !== 'string' || !/^\d{10}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 ? n : undefined;
}
