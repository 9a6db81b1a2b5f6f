/**
 * The correlation id past the first delivery (CE-16): a dead letter keeps the id of the publish
 * request its events came in with, push and pull alike, the API shows it, and a redrive sends it
 * again; a replayed event carries its replay's id, since the archive keeps the events only.
 */
import { describe, expect, it } from 'vitest';
import type { DeadLetter } from '../../../functions/core/delivery/delivery-records.js';
import { deadLetterView } from '../../../functions/core/delivery/delivery-views.js';
import { redriveMessages } from '../../../functions/core/delivery/redrive.js';
import { deadLetterStep } from '../../../functions/core/delivery/settle-attempt.js';
import { replayDelivery } from '../../../functions/core/replay/replay-worker.js';

const T0 = Date.parse('2026-11-26T12:00:00Z');
const EVENT = JSON.stringify({
  specversion: '1.0',
  id: 'e-1',
  source: 'urn:nld:oin:00000001823288444000:systeem:lvs',
  type: 'nl.edu.leerling.ingeschreven.v1',
});

function deadLetterOf(correlationId: string | undefined): DeadLetter {
  const message = {
    version: 1 as const,
    deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
    subscriptionId: 'sub-1',
    events: [EVENT],
    createdAt: T0,
    ...(correlationId === undefined ? {} : { correlationId }),
  };
  return deadLetterStep(
    { messageId: 'm-1', receiveCount: 3, message },
    'rejected',
    'the target answered 400',
    undefined,
    undefined,
    { deadLetterRetentionSeconds: 86_400 },
    T0,
  ).deadLetter;
}

describe('correlation ids past the first delivery (CE-16)', () => {
  it('CE-16: a dead letter keeps the correlation id of its delivery, the API shows it, and its redrive carries it again under a new key', () => {
    const deadLetter = deadLetterOf('publish-req-42');
    expect(deadLetter.correlationId).toBe('publish-req-42');
    expect(deadLetterView(deadLetter)).toMatchObject({ correlationId: 'publish-req-42' });
    const [redriven] = redriveMessages('sub-1', [deadLetter], T0 + 1000);
    expect(redriven).toMatchObject({
      correlationId: 'publish-req-42',
      redriveOf: deadLetter.deliveryId,
      events: [EVENT],
    });
    expect(redriven!.deliveryId).not.toBe(deadLetter.deliveryId);
  });

  it('CE-16: a delivery without a correlation id dead-letters and redrives without one, never an invented one', () => {
    const deadLetter = deadLetterOf(undefined);
    expect('correlationId' in deadLetter).toBe(false);
    expect('correlationId' in deadLetterView(deadLetter)).toBe(false);
    expect('correlationId' in redriveMessages('sub-1', [deadLetter], T0)[0]!).toBe(false);
  });

  it('CE-16, EDU-18: a replayed event carries its replay id as its correlation id', () => {
    const replayId = '5f0c7a52-9d1e-4c3b-8a6f-2e4d1b7c9a30';
    const message = replayDelivery(
      { replayId, subscriptionId: 'sub-1' },
      {
        json: EVENT,
        source: 'urn:nld:oin:00000001823288444000:systeem:lvs',
        id: 'e-1',
        type: 'nl.edu.leerling.ingeschreven.v1',
        acceptedAt: T0,
      },
      7,
      T0,
    );
    expect(message).toMatchObject({ correlationId: replayId, replay: { id: replayId, sequence: 7 } });
  });
});
