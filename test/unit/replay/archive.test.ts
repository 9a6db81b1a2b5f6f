/**
 * The archive's objects and its ordered reading (docs/REPLAY.md): one object per batch and hour,
 * events back byte for byte (CE-13), a window read in acceptance order across overlapping
 * batches, each event once however often it was archived.
 */
import { describe, expect, it } from 'vitest';
import { archiveBatch } from '../../../functions/core/replay/archive-writer.js';
import { gzipSync } from 'node:zlib';
import {
  archiveObjects,
  compareArchived,
  decodeArchiveObject,
  hourPrefix,
  hoursOf,
  parseArchiveKey,
  positionOf,
} from '../../../functions/core/replay/archive-format.js';
import { readArchiveChunk } from '../../../functions/core/replay/archive-reader.js';
import { MemoryEventArchive, MemoryReplayStore } from '../../support/memory/replay-memory-adapters.js';
import { ReplayRunningError } from '../../../functions/core/replay/ports.js';
import { readStoredEvent } from '../../../functions/core/cloudevents/index.js';
import { archiveAll, archived, HOUR, NOW, runningReplay, SOURCE } from './replay-fakes.js';

const ids = (events: readonly { id: string }[]) => events.map((e) => e.id);

describe('the event archive (issue 13, item 1)', () => {
  it('CE-13: an archived event comes back byte for byte, dataref and extensions included, with its acceptance time', () => {
    const json = `{ "specversion":"1.0","id":"e\\n1","source":"${SOURCE}","type":"t",\n "dataref":"https://k.example/payloads/x","koerierdatasize":12,"ext":"ü" }`;
    const [object] = archiveObjects([{ acceptedAt: NOW, source: SOURCE, id: 'e\n1', type: 't', json }]);
    expect(decodeArchiveObject(object!.body)).toEqual([
      { acceptedAt: NOW, source: SOURCE, id: 'e\n1', type: 't', json },
    ]);
  });

  it('EDU-18: one router batch is one object (one S3 request), named by its hour and first and last acceptance time; a batch across an hour is two', async () => {
    const archive = new MemoryEventArchive();
    const batch = [NOW + 5, NOW + 1, NOW + 9].map((at, i) => ({
      acceptedAt: at,
      event: readStoredEvent(archived(`e${i}`, at).json),
    }));
    expect(await archiveBatch(archive, batch)).toBe(1);
    expect(archive.requests).toBe(1);
    const [key] = [...archive.objects.keys()];
    expect(key!.startsWith(hourPrefix(NOW))).toBe(true);
    expect(hourPrefix(NOW)).toBe('archive/2026/11/23/12/');
    expect(parseArchiveKey(key!)).toMatchObject({ firstAt: NOW + 1, lastAt: NOW + 9 });
    expect(archiveObjects([archived('a', NOW - 1), archived('b', NOW)])).toHaveLength(2);
  });

  it('EDU-18: a window is read in acceptance order (time, then source, then id) across overlapping batches, within [from, to)', async () => {
    const archive = new MemoryEventArchive();
    // Two routers' batches interleave in time; a third arrives late for an earlier time.
    await archiveAll(archive, [
      [archived('a', NOW + 10), archived('c', NOW + 30), archived('e', NOW + 50)],
      [archived('b', NOW + 20), archived('d', NOW + 40)],
      [archived('a2', NOW + 10), archived('x', NOW + 5)],
      [archived('late', NOW + HOUR + 1)],
    ]);
    const chunk = await readArchiveChunk(archive, { from: NOW + 10, to: NOW + HOUR + 2, limit: 100 });
    expect(ids(chunk.events)).toEqual(['a', 'a2', 'b', 'c', 'd', 'e', 'late']);
    expect(chunk.done).toBe(true);
    // A list per hour and a get per object: each object is opened once, in its own hour.
    expect(chunk.requests).toBe(2 + 4);
    const sorted = [...chunk.events].sort((p, q) =>
      compareArchived(
        { at: p.acceptedAt, source: p.source, id: p.id },
        { at: q.acceptedAt, source: q.source, id: q.id },
      ),
    );
    expect(ids(sorted)).toEqual(ids(chunk.events));
  });

  it('EDU-18: chunk by chunk from a position, nothing is skipped or repeated, and an event archived twice comes once', async () => {
    const archive = new MemoryEventArchive();
    const all = Array.from({ length: 25 }, (_, i) => archived(`e${String(i).padStart(2, '0')}`, NOW + i * 1000));
    // Batches of 4; batch 2 archived again (its router batch was retried after the archive write).
    const batches = Array.from({ length: 7 }, (_, b) => all.slice(b * 4, b * 4 + 4));
    await archiveAll(archive, [...batches, batches[2]!]);
    const seen: string[] = [];
    let after;
    for (let round = 0; round < 20; round++) {
      const chunk = await readArchiveChunk(archive, { from: NOW, to: NOW + HOUR, after, limit: 3 });
      seen.push(...ids(chunk.events));
      const last = chunk.events.at(-1);
      if (last) after = { at: last.acceptedAt, source: last.source, id: last.id };
      if (chunk.done) break;
    }
    expect(seen).toEqual(ids(all));
  });

  it('EDU-18: an object gone since it was listed (expired) is passed over', async () => {
    const archive = new MemoryEventArchive();
    await archiveAll(archive, [[archived('a', NOW + 1)], [archived('b', NOW + 2)]]);
    const get = archive.get.bind(archive);
    archive.get = async (key) => (key.includes(String(NOW + 1)) ? undefined : get(key));
    expect(ids((await readArchiveChunk(archive, { from: NOW, to: NOW + 10, limit: 10 })).events)).toEqual(['b']);
  });

  it('EDU-18: an object that is not a Koerier archive, or a line missing a member, is refused rather than replayed', () => {
    const good = { at: NOW, source: SOURCE, id: 'e1', type: 't', event: '{}' };
    expect(decodeArchiveObject(gzipSync(`${JSON.stringify(good)}\n`))).toHaveLength(1);
    for (const member of ['at', 'source', 'id', 'type', 'event'] as const) {
      const line = JSON.stringify({ ...good, [member]: member === 'at' ? String(NOW) : 1 });
      expect(() => decodeArchiveObject(gzipSync(`${line}\n`)), member).toThrow(TypeError);
    }
  });

  it('EDU-18: only keys of the archive’s own shape, under its prefix, are archive objects', () => {
    const name = `${NOW}-${NOW + 1}-batch.jsonl.gz`;
    expect(parseArchiveKey(`archive/2026/11/23/12/${name}`)).toEqual({
      key: `archive/2026/11/23/12/${name}`,
      firstAt: NOW,
      lastAt: NOW + 1,
    });
    expect(parseArchiveKey(`payloads/2026/11/23/12/${name}`)).toBeUndefined();
    expect(parseArchiveKey(`archive/2026/11/23/12/${name}.part`)).toBeUndefined();
  });

  it('EDU-18: acceptance order is time first, then source, then id', () => {
    const at = (t: number, source: string, id: string) => ({ at: t, source, id });
    expect(compareArchived(at(1, 'urn:b', 'x'), at(2, 'urn:a', 'a'))).toBeLessThan(0);
    expect(compareArchived(at(1, 'urn:a', 'z'), at(1, 'urn:b', 'a'))).toBeLessThan(0);
    expect(compareArchived(at(1, 'urn:b', 'a'), at(1, 'urn:a', 'z'))).toBeGreaterThan(0);
    expect(compareArchived(at(1, 'urn:a', 'a'), at(1, 'urn:a', 'b'))).toBeLessThan(0);
    expect(compareArchived(at(1, 'urn:a', 'b'), at(1, 'urn:a', 'b'))).toBe(0);
  });

  it('ORD-7: events accepted in one millisecond (one request) are read in their acceptance position, as an ordered lane numbers them live, chunk by chunk; a copy still comes once; lines archived before positions keep source, id order', async () => {
    const archive = new MemoryEventArchive();
    const P = NOW * 1000;
    // One request of three events, accepted in this order: their ids and sources sort the other way.
    const batch = [
      { id: 'z-first', source: 'urn:z', position: P + 1 },
      { id: 'm-second', source: 'urn:m', position: P + 2 },
      { id: 'a-third', source: 'urn:a', position: P + 3 },
    ].map(({ id, source, position }) => ({
      acceptedAt: NOW,
      acceptedPosition: position,
      event: readStoredEvent(archived(id, NOW, 't', source).json),
    }));
    await archiveBatch(archive, batch);
    // The router batch retried after its archive write: the same events, times and positions again.
    await archiveBatch(archive, batch.slice(1));
    const seen: string[] = [];
    let after;
    for (let round = 0; round < 10; round++) {
      const chunk = await readArchiveChunk(archive, { from: NOW, to: NOW + 1, after, limit: 1 });
      seen.push(...ids(chunk.events));
      const last = chunk.events.at(-1);
      if (last) after = positionOf(last);
      if (chunk.done) break;
    }
    expect(seen).toEqual(['z-first', 'm-second', 'a-third']);
    const [object] = [...archive.objects.values()];
    expect(decodeArchiveObject(object!).map((e) => e.acceptedPosition)).toEqual([P + 1, P + 2, P + 3]);
    // Archived before positions: the same millisecond comes in source, id order.
    const old = await readArchiveChunk(
      await (async () => {
        const before = new MemoryEventArchive();
        await archiveAll(before, [[archived('z', NOW, 't', 'urn:z'), archived('a', NOW, 't', 'urn:a')]]);
        return before;
      })(),
      { from: NOW, to: NOW + 1, limit: 10 },
    );
    expect(ids(old.events)).toEqual(['a', 'z']);
  });

  it('EDU-18: a window ending on the hour reads no object of the next hour; within an object, an event at "to" is left out', async () => {
    expect(hoursOf(NOW - HOUR + 1, NOW + HOUR)).toEqual([NOW - HOUR, NOW]);
    const archive = new MemoryEventArchive();
    await archiveAll(archive, [
      [archived('in', NOW + 1), archived('at-to', NOW + 2), archived('after', NOW + 3)],
      [archived('from-to', NOW + 2)],
    ]);
    const chunk = await readArchiveChunk(archive, { from: NOW, to: NOW + 2, limit: 10 });
    expect(ids(chunk.events)).toEqual(['in']);
    // The object that starts at "to" is not opened: one list, one get.
    expect(chunk.requests).toBe(2);
  });

  it('EDU-18: a chunk holds at most its limit, even from one object, and reads no further object once full', async () => {
    const archive = new MemoryEventArchive();
    await archiveAll(archive, [
      Array.from({ length: 10 }, (_, i) => archived(`e${i}`, NOW + i)),
      [archived('next', NOW + 20)],
      [archived('last', NOW + 30)],
    ]);
    const chunk = await readArchiveChunk(archive, { from: NOW, to: NOW + HOUR, limit: 3 });
    expect(ids(chunk.events)).toEqual(['e0', 'e1', 'e2']);
    expect(chunk.done).toBe(false);
    // One list and one get: the other two objects are not opened.
    expect(chunk.requests).toBe(2);
    const eleven = await readArchiveChunk(archive, { from: NOW, to: NOW + HOUR, limit: 11 });
    expect(ids(eleven.events)).toHaveLength(11);
    expect(eleven.requests).toBe(3);
  });

  it('EDU-18: from a position, earlier hours and objects wholly before it or after the window are not read; foreign keys are passed over', async () => {
    const archive = new MemoryEventArchive();
    await archiveAll(archive, [
      [archived('early', NOW - HOUR + 5)],
      [archived('a', NOW + 1)],
      [archived('b', NOW + 10)],
      [archived('beyond', NOW + 50)],
    ]);
    await archive.put(`${hourPrefix(NOW)}README.txt`, Buffer.from('not an archive object'));
    const before = archive.requests;
    const chunk = await readArchiveChunk(archive, {
      from: NOW - HOUR,
      to: NOW + 20,
      after: { at: NOW + 5, source: SOURCE, id: 'x' },
      limit: 10,
    });
    expect(ids(chunk.events)).toEqual(['b']);
    // One list (this hour) and one get (the object of b).
    expect(chunk.requests).toBe(2);
    expect(archive.requests - before).toBe(2);
  });
});

describe('the replay slot (issue 13, item 2)', () => {
  it('EDU-18: a running replay whose lease ran out is failed when another takes its slot; within the lease the slot is refused', async () => {
    let now = NOW;
    const store = new MemoryReplayStore(() => now);
    await store.start(runningReplay({ replayId: 'old', version: 4 }), NOW + 1000);
    now = NOW + 1000;
    await expect(store.start(runningReplay({ replayId: 'new' }), NOW + HOUR)).rejects.toBeInstanceOf(
      ReplayRunningError,
    );
    now = NOW + 1001;
    await store.start(runningReplay({ replayId: 'new' }), NOW + HOUR);
    expect(await store.get('sub-1', 'old')).toMatchObject({
      state: 'failed',
      reason: 'it stopped making progress (its worker kept failing)',
      finishedAt: NOW + 1001,
      updatedAt: NOW + 1001,
      version: 5,
    });
    expect(await store.get('sub-1', 'new')).toMatchObject({ state: 'running' });
  });
});
