/**
 * EDU-IDEM-11 (issue 36, item 3): every attempt of a delivery sends the body its first attempt sent,
 * whatever the owner PATCHed since (`frozen-rendering.ts`). The end-to-end case is
 * test/e2e/delivery-rendering-frozen.test.ts; here the dispatcher's part, with the progress kept
 * in memory, and the rules one by one.
 */
import { describe, expect, it } from 'vitest';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import { asRendered, renderingFor, storedRendering } from '../../../functions/core/delivery/frozen-rendering.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import { answered, setup, SUB, T0, task } from './dispatcher-harness.js';

const EVENT =
  '{"specversion":"1.0","id":"e-1","source":"urn:example:a","type":"nl.example.frozen.v1","data":{"hello":"world"}}';
type Settings = { -readonly [K in 'contentMode' | 'maxInlineBytes' | 'batchSupported']?: Subscription[K] };

/** A delivery answered 503, the subscription changed by `patch`, then received again. */
async function retryAfterPatch(before: Settings, patch: Settings, events = [EVENT]) {
  const settings: Settings = { ...before };
  const run = setup({ answers: [answered(503)], subscription: settings });
  const inlineLimits: (number | undefined)[] = [];
  run.deps.outgoingEvents = async (subscription, queued) => (inlineLimits.push(subscription.maxInlineBytes), queued);
  const splits: unknown[] = [];
  run.deps.outbox = { enqueue: async (_subscription, messages) => void splits.push(...messages) };
  const delivery = task({ events });
  const first = await dispatchBatch([delivery], run.deps);
  expect(first.decisions).toEqual([
    { messageId: delivery.messageId, action: 'retry', delaySeconds: expect.any(Number) },
  ]);
  Object.assign(settings, patch);
  run.clock.now = T0 + 3_600_000;
  await dispatchBatch([{ ...delivery, receiveCount: 2 }], run.deps);
  return { ...run, inlineLimits, splits };
}

const contentHeaders = (headers: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers).filter(
      ([name]) => name === 'content-type' || name === 'idempotency-key' || name.startsWith('ce-'),
    ),
  );

describe('a retry renders the delivery as its first attempt did (EDU-IDEM-11; issue 36, item 3)', () => {
  it('EDU-IDEM-11: contentmode PATCHed from structured to binary before the retry: the same key, body and Content-Type again', async () => {
    const { sent, sentHeaders, store } = await retryAfterPatch(
      { contentMode: 'structured' },
      { contentMode: 'binary' },
    );
    expect(sent).toEqual([EVENT, EVENT]);
    expect(contentHeaders(sentHeaders[1]!)).toEqual(contentHeaders(sentHeaders[0]!));
    expect(sentHeaders[1]!['content-type']).toContain('application/cloudevents+json');
    expect([...store.progress.values()][0]!.progress.rendering).toEqual({ format: 'structured' });
  });

  it('EDU-IDEM-11: contentmode PATCHed from binary to structured before the retry: binary again, with the same ce- headers', async () => {
    const { sent, sentHeaders } = await retryAfterPatch({ contentMode: 'binary' }, { contentMode: 'structured' });
    expect(sent).toEqual(['{"hello":"world"}', '{"hello":"world"}']);
    expect(sentHeaders[1]!['ce-id']).toBe('e-1');
    expect(contentHeaders(sentHeaders[1]!)).toEqual(contentHeaders(sentHeaders[0]!));
  });

  it('EDU-IDEM-11, EDU-1: maxinlinebytes PATCHed before the retry: the claim check decides by the first attempt’s limit, also when it had none of its own', async () => {
    expect((await retryAfterPatch({ maxInlineBytes: 1_048_576 }, { maxInlineBytes: 65_536 })).inlineLimits).toEqual([
      1_048_576, 1_048_576,
    ]);
    expect((await retryAfterPatch({}, { maxInlineBytes: 1_048_576 })).inlineLimits).toEqual([undefined, undefined]);
  });

  it('EDU-IDEM-11, JSON-3: a batch whose target no longer takes batches is split into deliveries with keys of their own, never sent as another body under its key', async () => {
    const second = EVENT.replace('e-1', 'e-2');
    const { sent, splits } = await retryAfterPatch(
      { contentMode: 'batch', batchSupported: true },
      { contentMode: 'structured' },
      [EVENT, second],
    );
    expect(sent).toEqual([`[${EVENT},${second}]`]);
    expect(splits).toHaveLength(2);
  });
});

describe('the rendering rules (EDU-IDEM-11)', () => {
  const subscription = { contentMode: 'binary', batchSupported: false, maxInlineBytes: 100_000 } as const;

  it('EDU-IDEM-11: a first attempt renders from the subscription; a retry from what the progress kept; a progress from before renderings were kept renders from the subscription', () => {
    expect(renderingFor(subscription, 1, undefined)).toEqual({ format: 'binary', maxInlineBytes: 100_000 });
    expect(renderingFor(subscription, 1, { rendering: { format: 'structured' } })).toEqual({ format: 'structured' });
    expect(renderingFor(subscription, 1, {})).toEqual({ format: 'binary', maxInlineBytes: 100_000 });
    expect(renderingFor(subscription, 2, { rendering: { format: 'batch' } })).toBe('split');
  });

  it("EDU-IDEM-11: asRendered gives the claim check the first attempt's limit, or none when it had none", () => {
    const now = { id: SUB, maxInlineBytes: 65_536 };
    expect(asRendered(now, { format: 'structured', maxInlineBytes: 1_048_576 })).toEqual({
      id: SUB,
      maxInlineBytes: 1_048_576,
    });
    expect(asRendered(now, { format: 'structured' })).toEqual({ id: SUB });
    expect(asRendered(now, { format: 'structured', maxInlineBytes: 65_536 })).toBe(now);
  });

  it('EDU-IDEM-11: a stored rendering is read back only with a known content mode', () => {
    expect(storedRendering('binary', 70_000)).toEqual({ format: 'binary', maxInlineBytes: 70_000 });
    expect(storedRendering('batch', undefined)).toEqual({ format: 'batch' });
    expect(storedRendering('xml', 70_000)).toBeUndefined();
    expect(storedRendering(undefined, undefined)).toBeUndefined();
  });
});
