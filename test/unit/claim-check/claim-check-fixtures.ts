/** Events and memory ports shared by the claim check's unit tests (claim-check/*.test.ts). */
import { createHash, randomUUID } from 'node:crypto';
import { acceptedEvent, type AcceptedEvent } from '../../../functions/core/cloudevents/accepted-event.js';
import { attributesOf } from '../../../functions/core/cloudevents/stored-event.js';
import { InMemoryClaimCheckStore, InMemoryPayloadLedger } from '../../support/memory/claim-check-memory-adapters.js';
import { offloadEvents } from '../../../functions/core/claim-check/offload.js';

export const BASE = 'https://koerier.example';
export const SETTINGS = { inlineEventBytes: 65_536, maxQueuedEventBytes: 253_952 };
export const NOW = Date.UTC(2026, 10, 23, 12);
export const DAY = 24 * 3600 * 1000;
export const RETENTION_SECONDS = 15 * 86400;

export function sha256(bytes: Buffer): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}

export function accepted(json: string): AcceptedEvent {
  return acceptedEvent(attributesOf(JSON.parse(json) as Record<string, unknown>), json);
}

/** A structured event of exactly `size` bytes, its data a text string. */
export function eventOfSize(size: number, extra: Record<string, unknown> = {}): AcceptedEvent {
  const head = {
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:1:lvs',
    type: 'nl.edu.x.v1',
    datacontenttype: 'text/plain',
    ...extra,
  };
  const empty = Buffer.byteLength(JSON.stringify({ ...head, data: '' }));
  return accepted(JSON.stringify({ ...head, data: 'z'.repeat(size - empty) }));
}

/** An event whose context attributes (as JSON) take exactly `attributeBytes`, with `body` (data or nothing) after them. */
export function eventWithAttributesOf(attributeBytes: number, body: Record<string, unknown> = {}): AcceptedEvent {
  const head = {
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:a',
    type: 't',
    datacontenttype: 'text/plain',
    comexample: '',
  };
  const padding = attributeBytes - Buffer.byteLength(JSON.stringify(head));
  const event = accepted(JSON.stringify({ ...head, comexample: 'a'.repeat(padding), ...body }));
  if (Buffer.byteLength(JSON.stringify(event.attributes)) !== attributeBytes)
    throw new Error('fixture: attributes of the wrong size');
  return event;
}

export function memoryPorts() {
  const store = new InMemoryClaimCheckStore();
  const ledger = new InMemoryPayloadLedger();
  const offloadDeps = () => ({
    store,
    ledger,
    settings: { ...SETTINGS, publicBaseUrl: BASE, retentionSeconds: RETENTION_SECONDS },
  });
  /** `event` offloaded at NOW by `publisher`: the queued event, parsed. */
  const stored = async (event: AcceptedEvent, publisher = 'publisher') => {
    const [queued] = await offloadEvents([event], [0], publisher, NOW, offloadDeps());
    return JSON.parse(queued!.json) as Record<string, unknown>;
  };
  return { store, ledger, offloadDeps, stored };
}

/** The payload id at the end of a queued event's `dataref`. */
export const idOf = (event: Record<string, unknown>) => (event['dataref'] as string).split('/').at(-1)!;
