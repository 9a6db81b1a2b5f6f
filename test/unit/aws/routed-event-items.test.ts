/**
 * Issue 30 item 1: what the routed-event ledger's items keep for the trace (functions/aws/routed-event-items.ts):
 * the acceptance round-trips through the marker's attributes, and one event's routes stay within
 * their share of a commit item however many subscriptions it went to.
 */
import { describe, expect, it } from 'vitest';
import {
  acceptanceAttributes,
  acceptanceOf,
  ROUTES_KEPT_BYTES,
  routesValue,
  routingOf,
} from '../../../functions/aws/routed-event-items.js';

describe("the routed marker's trace attributes (issue 30 item 1)", () => {
  it('SELF-1, issue 30 item 1: the acceptance is read back as written, and a marker without one has none', () => {
    const acceptance = {
      acceptedAt: 1_764_417_600_123,
      publisher: 'school-lvs',
      idempotencyKey: 'k-1',
      correlationId: 'c-1',
    };
    expect(acceptanceOf(acceptanceAttributes(acceptance))).toEqual(acceptance);
    expect(acceptanceOf(acceptanceAttributes({ acceptedAt: 5 }))).toEqual({ acceptedAt: 5 });
    expect(acceptanceOf({})).toBeUndefined();
  });

  it('SELF-1, issue 30 item 1: an event routed wider than its share of the commit keeps its count only', () => {
    const few = Array.from({ length: 3 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);
    expect(routingOf(routesValue({ routedAt: 7, subscriptionIds: few }))).toEqual({
      routedAt: 7,
      count: 3,
      subscriptionIds: few,
    });
    const many = Array.from({ length: 500 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const kept = routesValue({ routedAt: 7, subscriptionIds: many });
    expect(Buffer.byteLength(kept.S!)).toBeLessThanOrEqual(ROUTES_KEPT_BYTES);
    expect(routingOf(kept)).toEqual({ routedAt: 7, count: 500 });
  });
});
