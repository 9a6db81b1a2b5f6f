/**
 * Which events go by reference at ingest (EDU-1, CE-11, CE-14, CE-15): the edges of the queue
 * message's limit, events without data, and how a refusal names its member in a batch.
 */
import { describe, expect, it } from 'vitest';
import { planOffload } from '../../../functions/core/claim-check/offload.js';
import { refusalOf } from '../../support/refusals.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { SETTINGS, eventOfSize, eventWithAttributesOf } from './claim-check-fixtures.js';

const MAX = SETTINGS.maxQueuedEventBytes;
/** What planOffload keeps free for `dataref`, the digest and the size. */
const OVERHEAD = 4096;

describe('planOffload: events that cannot shrink', () => {
  it('CE-15: an event without data above the inline threshold but within a queue message is queued as it is', () => {
    // Nothing to move: it must not be planned for the claim check (there is no data to write).
    const noData = eventWithAttributesOf(100_000);
    expect(planOffload([noData], SETTINGS)).toEqual([]);
  });

  it('CE-15: an event without data of exactly a queue message is queued as it is', () => {
    const noData = eventWithAttributesOf(MAX);
    expect(Buffer.byteLength(noData.json)).toBe(MAX);
    expect(planOffload([noData], SETTINGS)).toEqual([]);
  });

  it('CE-15: an event whose attributes leave no room for a reference, but which fits a queue message with its data, is queued as it is', () => {
    const crowded = eventWithAttributesOf(250_000, { data: 'z'.repeat(1000) });
    expect(Buffer.byteLength(crowded.json)).toBeLessThanOrEqual(MAX);
    expect(planOffload([crowded], SETTINGS)).toEqual([]);
  });

  it('EDU-1: attributes with exactly the room a reference needs still go by reference', () => {
    const tight = eventWithAttributesOf(MAX - OVERHEAD, { data: 'z'.repeat(10_000) });
    expect(Buffer.byteLength(tight.json)).toBeGreaterThan(MAX);
    expect(planOffload([tight], SETTINGS)).toEqual([0]);
  });

  it("CE-11: a producer's own dataref of exactly a queue message is forwarded as it is", () => {
    expect(planOffload([eventOfSize(MAX, { dataref: 'https://school.example/f' })], SETTINGS)).toEqual([]);
  });
});

describe('planOffload: refusals', () => {
  it("EDU-1: the claim check's own attribute is 400 reserved-attribute; in a batch the problem names the member's index", () => {
    const reserved = eventOfSize(1000, { koerierdatasize: 3 });
    const alone = refusalOf(() => planOffload([reserved], SETTINGS)).problem;
    expect(alone).toMatchObject({
      status: 400,
      type: problemTypeUri('reserved-attribute'),
      title: 'Reserved extension attribute',
    });
    // A single event has no index: the problem is about the request as a whole.
    expect(alone).not.toHaveProperty('index');
    const inBatch = refusalOf(() => planOffload([eventOfSize(1000), reserved], SETTINGS)).problem;
    expect(inBatch).toMatchObject({ status: 400, type: problemTypeUri('reserved-attribute'), index: 1 });
  });

  it('EDU-1: a 413 in a batch names the member too large to queue', () => {
    const tooLarge = eventOfSize(MAX + 1, { dataref: 'https://school.example/f' });
    const refused = refusalOf(() => planOffload([eventOfSize(1000), eventOfSize(1000), tooLarge], SETTINGS)).problem;
    expect(refused).toMatchObject({ status: 413, index: 2 });
  });
});
