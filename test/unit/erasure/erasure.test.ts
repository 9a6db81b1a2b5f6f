/**
 * Issue 31 item 4: the erasure's domain without emulators — which events a selector takes, the
 * request body, the audit hash, and one run of the worker over in-memory stores (the archive, the
 * claim check with its ledger, dead letters and a pull queue).
 */
import { describe, expect, it } from 'vitest';
import { auditKeyFrom, selectorDigest } from '../../../functions/core/erasure/erasure-audit.js';
import { parseErasureRequest } from '../../../functions/core/erasure/erasure-request.js';
import { runErasureChunk } from '../../../functions/core/erasure/erasure-worker.js';
import { parseDataPath, selects, type EventSelector } from '../../../functions/core/erasure/event-selector.js';
import {
  NO_ERASED,
  type WaitingLaneEvent,
  type ErasableStores,
  type ErasureMessage,
  type ErasureRecord,
} from '../../../functions/core/erasure/ports.js';
import { decodeArchiveObject, encodeArchiveObject, hourPrefix } from '../../../functions/core/replay/archive-format.js';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import type { DeadLetter } from '../../../functions/core/delivery/delivery-records.js';
import { refusalOf } from '../../support/refusals.js';

const event = (id: string, subject: string, data: unknown = { leerling: { nummer: subject } }) =>
  JSON.stringify({ specversion: '1.0', source: 'urn:s', id, type: 't', subject, data });

describe('issue 31 item 4: which events a selector takes', () => {
  it('PRIV-2, issue 31 item 4: by subject, by source and id, and by a value at a path into data, exactly', async () => {
    const e = event('e1', 'leerling/1', { leerling: { nummer: '1', groepen: [{ naam: '8b' }] } });
    expect(await selects({ kind: 'subject', subject: 'leerling/1' }, { json: e })).toBe(true);
    expect(await selects({ kind: 'subject', subject: 'leerling/10' }, { json: e })).toBe(false);
    expect(await selects({ kind: 'events', events: [{ source: 'urn:s', id: 'e1' }] }, { json: e })).toBe(true);
    expect(await selects({ kind: 'events', events: [{ source: 'urn:t', id: 'e1' }] }, { json: e })).toBe(false);
    const path = parseDataPath("$.leerling['groepen'][0].naam")!;
    expect(path).toEqual(['leerling', 'groepen', 0, 'naam']);
    expect(await selects({ kind: 'data', path, equals: '8b' }, { json: e })).toBe(true);
    expect(await selects({ kind: 'data', path, equals: '8' }, { json: e })).toBe(false);
  });

  it('PRIV-2, issue 31 item 4: a data path reads data kept by reference, and only when the event has no data inline', async () => {
    const byReference = JSON.stringify({ specversion: '1.0', source: 'urn:s', id: 'e2', type: 't', dataref: 'x' });
    const selector: EventSelector = { kind: 'data', path: ['leerling', 'nummer'], equals: '7' };
    expect(
      await selects(selector, { json: byReference, referencedData: async () => ({ leerling: { nummer: '7' } }) }),
    ).toBe(true);
    expect(await selects(selector, { json: byReference })).toBe(false);
  });

  it('PRIV-2, issue 31 item 4: only definite JSONPaths: no wildcards, filters or descendants', () => {
    for (const text of ['$', 'leerling.id', '$.*', '$..id', '$[?(@.id)]', '$.a[-1]', '$.a[*]'])
      expect(parseDataPath(text), text).toBeUndefined();
  });

  it('PRIV-2, issue 31 item 4: a body names exactly one selector; two or none is a 400 invalid-erasure-request', () => {
    expect(parseErasureRequest(Buffer.from('{"subject":"leerling/1"}'))).toEqual({
      kind: 'subject',
      subject: 'leerling/1',
    });
    for (const body of [
      '{}',
      '{"subject":"a","events":[{"source":"s","id":"i"}]}',
      '{"data":{"path":"$..x","equals":1}}',
    ]) {
      const refusal = refusalOf(() => parseErasureRequest(Buffer.from(body)));
      expect(refusal.problem.status, body).toBe(400);
      expect(String(refusal.problem.type), body).toMatch(/invalid-erasure-request$/);
    }
  });

  it('PRIV-2, issue 31 item 4: the audit digest is keyed: another key gives another digest, and the events’ order does not matter', () => {
    const key = auditKeyFrom(Buffer.alloc(32, 1));
    const a: EventSelector = {
      kind: 'events',
      events: [
        { source: 's', id: '1' },
        { source: 's', id: '2' },
      ],
    };
    const b: EventSelector = {
      kind: 'events',
      events: [
        { source: 's', id: '2' },
        { source: 's', id: '1' },
      ],
    };
    expect(selectorDigest(a, key)).toBe(selectorDigest(b, key));
    expect(selectorDigest(a, key)).not.toBe(selectorDigest(a, auditKeyFrom(Buffer.alloc(32, 2))));
    expect(selectorDigest({ kind: 'subject', subject: 'leerling/1' }, key)).not.toContain('leerling');
  });
});

describe('issue 31 item 4: one erasure over in-memory stores', () => {
  it('PRIV-2, issue 31 item 4: removes the selection from the archive, the claim check, dead letters and a pull queue, and leaves the rest', async () => {
    const now = Date.UTC(2026, 10, 29, 12);
    const archive = new Map<string, Buffer>();
    const at = now - 3600_000;
    const large = JSON.stringify({
      specversion: '1.0',
      source: 'urn:s',
      id: 'big',
      type: 't',
      subject: 'leerling/1',
      dataref: 'https://k/v1/payloads/' + 'A'.repeat(43),
    });
    archive.set(
      `${hourPrefix(at)}a.jsonl.gz`,
      encodeArchiveObject([
        { acceptedAt: at, source: 'urn:s', id: 'p1', type: 't', json: event('p1', 'leerling/1') },
        { acceptedAt: at, source: 'urn:s', id: 'o1', type: 't', json: event('o1', 'leerling/2') },
        { acceptedAt: at, source: 'urn:s', id: 'big', type: 't', json: large },
      ]),
    );
    archive.set(
      `${hourPrefix(at)}b.jsonl.gz`,
      encodeArchiveObject([{ acceptedAt: at, source: 'urn:s', id: 'p2', type: 't', json: event('p2', 'leerling/1') }]),
    );
    const objects = new Map([
      [
        'payloads/' + 'A'.repeat(43),
        { bytes: Buffer.from('{}'), contentType: 'application/json', form: 'json' as const },
      ],
    ]);
    const forgotten: string[] = [];
    const deadLetter: DeadLetter = {
      subscriptionId: 'sub',
      deliveryId: 'd',
      events: [event('p3', 'leerling/1'), event('o3', 'leerling/3')],
      createdAt: at,
      deadLetteredAt: new Date(at).toISOString(),
      reason: 'exhausted',
      detail: '',
      attempts: 1,
      lastAttempts: [],
    };
    let deadLetters: DeadLetter[] = [deadLetter];
    const queue = [
      {
        messageId: 'm1',
        receiptHandle: 'r1',
        body: encodeDeliveryMessage({
          version: 1,
          deliveryId: 'x',
          subscriptionId: 'sub',
          events: [event('p4', 'leerling/1')],
          createdAt: at,
        }),
        receiveCount: 1,
      },
      {
        messageId: 'm2',
        receiptHandle: 'r2',
        body: encodeDeliveryMessage({
          version: 1,
          deliveryId: 'y',
          subscriptionId: 'sub',
          events: [event('o4', 'leerling/4')],
          createdAt: at,
        }),
        receiveCount: 1,
      },
    ];
    let handedOut = false;
    const released: string[] = [];
    const deleted: string[] = [];
    const stores: ErasableStores = {
      archive: {
        put: async (key, body) => void archive.set(key, body),
        list: async (prefix) => [...archive.keys()].filter((key) => key.startsWith(prefix)).sort(),
        get: async (key) => archive.get(key),
        delete: async (key) => void archive.delete(key),
      },
      claimCheck: { get: async (key) => objects.get(key), delete: async (key) => void objects.delete(key) },
      payloadLedger: { get: async () => undefined, forget: async (id) => void forgotten.push(id) },
      subscriptions: { listAll: async () => ({ items: [{ id: 'sub', delivery: 'pull' }] as never }) },
      deadLetters: {
        putDeadLetter: async (dl) => void (deadLetters = [dl]),
        listDeadLetters: async () => ({ items: deadLetters }),
        deleteDeadLetters: async () => void (deadLetters = []),
      },
      pullQueues: {
        inFlight: async () => 2,
        receive: async () => (handedOut ? [] : ((handedOut = true), queue)),
        delete: async (_id, entries) => (entries.forEach((e) => deleted.push(e.receiptHandle)), new Map()),
        changeVisibility: async (_id, entries) => (entries.forEach((e) => released.push(e.receiptHandle)), new Map()),
        send: async () => undefined,
      },
      orderedLanes: {
        // No subscription is ordered: the lanes are not read (that reads the whole deliveries table).
        waiting: async () => expect.unreachable('lanes read without an ordered subscription'),
        rewrite: async () => undefined,
        remove: async () => undefined,
      },
    };
    let record: ErasureRecord = {
      id: 'er',
      state: 'running',
      selectorKind: 'subject',
      selectorDigest: 'd',
      requestedBy: 'op',
      createdAt: now,
      updatedAt: now,
      erased: NO_ERASED,
      notReached: [],
    };
    const sent: ErasureMessage[] = [];
    const deps = {
      stores,
      store: {
        put: async (r: ErasureRecord) => void (record = r),
        get: async () => record,
        list: async () => [record],
      },
      queue: { send: async (m: ErasureMessage) => void sent.push(m) },
      archiveRetentionMs: 2 * 3600_000,
      deadLetterRetentionSeconds: 3600,
      chunkBudgetMs: 60_000,
      clock: () => now,
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    };
    const selector: EventSelector = { kind: 'subject', subject: 'leerling/1' };
    await runErasureChunk({ erasureId: 'er', selector, phase: 'archive' }, deps);
    expect(sent).toEqual([{ erasureId: 'er', selector, phase: 'queued' }]);
    await runErasureChunk(sent[0]!, deps);

    expect([...archive.keys()]).toEqual([`${hourPrefix(at)}a.jsonl.gz`]);
    expect(decodeArchiveObject(archive.get(`${hourPrefix(at)}a.jsonl.gz`)!).map((e) => e.id)).toEqual(['o1']);
    expect(objects.size).toBe(0);
    expect(forgotten).toEqual(['A'.repeat(43)]);
    expect(deadLetters.map((dl) => dl.events.map((e) => JSON.parse(e).id))).toEqual([['o3']]);
    expect(deleted).toEqual(['r1']);
    expect(released).toEqual(['r2']);
    expect(record.state).toBe('finished');
    expect(record.erased).toEqual({
      archiveEvents: 3,
      archiveObjectsRewritten: 1,
      archiveObjectsDeleted: 1,
      payloadObjects: 1,
      deadLetterEvents: 1,
      pullQueueEvents: 1,
      orderedLaneEvents: 0,
    });
    expect(record.notReached.map((n) => [n.where, n.count])).toEqual([
      ['receivers', 3],
      ['pull-queues-in-flight', 2],
      ['push-deliveries-queued', undefined],
    ]);
  });

  it('PRIV-2, ORD-3: events waiting in ordered lanes are taken too: a staged one removed, a numbered one stored again without them (its place kept), the rest left', async () => {
    const now = Date.UTC(2026, 10, 29, 12);
    const lane = (ref: string, state: 'staged' | 'numbered', events: string[]): WaitingLaneEvent => ({
      ref,
      state,
      body: encodeDeliveryMessage({ version: 1, deliveryId: ref, subscriptionId: 'sub', events, createdAt: now }),
    });
    const waiting = [
      lane('p1', 'staged', [event('p1', 'leerling/1')]),
      lane('p2', 'staged', [event('p2', 'leerling/1'), event('o2', 'leerling/2')]),
      lane('e1', 'numbered', [event('e1', 'leerling/1')]),
      lane('e2', 'numbered', [event('e2', 'leerling/2')]),
    ];
    const removed: string[] = [];
    const rewritten = new Map<string, string[]>();
    const nothing = async () => undefined;
    let record: ErasureRecord = {
      id: 'er',
      state: 'running',
      selectorKind: 'subject',
      selectorDigest: 'd',
      requestedBy: 'op',
      createdAt: now,
      updatedAt: now,
      erased: NO_ERASED,
      notReached: [],
    };
    const stores = {
      archive: { put: nothing, list: async () => [], get: nothing, delete: nothing },
      claimCheck: { get: nothing, delete: nothing },
      payloadLedger: { get: nothing, forget: nothing },
      subscriptions: { listAll: async () => ({ items: [{ id: 'sub', delivery: 'push', ordering: {} }] as never }) },
      deadLetters: { putDeadLetter: nothing, listDeadLetters: async () => ({ items: [] }), deleteDeadLetters: nothing },
      pullQueues: {
        inFlight: async () => 0,
        receive: async () => [],
        delete: nothing,
        changeVisibility: nothing,
        send: nothing,
      },
      orderedLanes: {
        // Two pages, as a filtered scan gives them.
        waiting: async (cursor?: string) =>
          cursor === undefined ? { items: waiting.slice(0, 2), cursor: 'next' } : { items: waiting.slice(2) },
        rewrite: async (item: WaitingLaneEvent, body: string) =>
          void rewritten.set(
            item.ref,
            decodeDeliveryMessage(body).events.map((e) => JSON.parse(e).id),
          ),
        remove: async (item: WaitingLaneEvent) => void removed.push(item.ref),
      },
    } as unknown as ErasableStores;
    await runErasureChunk(
      { erasureId: 'er', selector: { kind: 'subject', subject: 'leerling/1' }, phase: 'queued' },
      {
        stores,
        store: {
          put: async (r: ErasureRecord) => void (record = r),
          get: async () => record,
          list: async () => [record],
        },
        queue: { send: nothing },
        archiveRetentionMs: 3600_000,
        deadLetterRetentionSeconds: 3600,
        chunkBudgetMs: 60_000,
        clock: () => now,
        log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      },
    );
    expect(removed).toEqual(['p1']);
    expect([...rewritten]).toEqual([
      ['p2', ['o2']],
      ['e1', []],
    ]);
    expect(record.erased.orderedLaneEvents).toBe(3);
  });
});
