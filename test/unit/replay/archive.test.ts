/**
 * The archive's objects and its ordered reading (docs/REPLAY.md): one object per batch and hour,
 * events back byte for byte (CE-13), a window read in acceptance order across overlapping
 * batches, each event once however often it was archived.
 */
import { describe, expect, it } from 'vitest';
import { archiveBatch } from '../../../functions/core/replay/archive-writer.js';
import { archiveObjects, compareArchived, decodeArchiveObject, hourPrefix, parseArchiveKey } from '../../../functions/core/replay/archive-format.js';
import { readArchiveChunk } from '../../../functions/core/replay/archive-reader.js';
import { MemoryEventArchive } from '../../../functions/core/replay/memory-adapters.js';
import { readStoredEvent } from '../../../functions/core/cloudevents/index.js';
import { archiveAll, archived, HOUR, NOW, SOURCE } from './replay-fakes.js';

const ids = (events: readonly { id: string }[]) => events.map((e) => e.id);

describe('the event archive (issue 13, item 1)', () => {
  it('CE-13: an archived event comes back byte for byte, dataref and extensions included, with its acceptance time', () => {
    const json = `{ "specversion":"1.0","id":"e\\n1","source":"${SOURCE}","type":"t",\n "dataref":"https://k.example/payloads/x","koerierdatasize":12,"ext":"ü" }`;
    const [object] = archiveObjects([{ acceptedAt: NOW, source: SOURCE, id: 'e\n1', type: 't', json }]);
    expect(decodeArchiveObject(object!.body)).toEqual([{ acceptedAt: NOW, source: SOURCE, id: 'e\n1', type: 't', json }]);
  });

  it('EDU-18: one router batch is one object (one S3 request), named by its hour and first and last acceptance time; a batch across an hour is two', async () => {
    const archive = new MemoryEventArchive();
    const batch = [NOW + 5, NOW + 1, NOW + 9].map((at, i) => ({ acceptedAt: at, event: readStoredEvent(archived(`e${i}`, at).json) }));
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
    const sorted = [...chunk.events].sort((p, q) =>
      compareArchived({ at: p.acceptedAt, source: p.source, id: p.id }, { at: q.acceptedAt, source: q.source, id: q.id }),
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
});
