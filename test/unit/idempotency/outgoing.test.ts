import { describe, expect, it } from 'vitest';
import { mayRetry, readIdempotencyKey, startOutgoingOperation, type Clock } from '../../../functions/core/idempotency/index.js';

const SEVEN_DAYS = 7 * 24 * 3600;

function controlledClock(start = Date.UTC(2026, 0, 1)): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => (now += ms) };
}

describe('outgoing operations (Koerier as a client)', () => {
  it('EDU-IDEM-9: an operation gets one UUIDv4 key that the receiver accepts, and keeps it', () => {
    const clock = controlledClock();
    const op = startOutgoingOperation('{"id":"1"}', SEVEN_DAYS, clock);
    expect(readIdempotencyKey({ 'idempotency-key': op.key })).toEqual({ key: op.key });
    expect(op.createdAt).toBe(clock.now());
    expect(op.expiresAt).toBe(clock.now() + SEVEN_DAYS * 1000);
    // Kept with the delivery: what survives serialisation is the same operation.
    expect(JSON.parse(JSON.stringify(op))).toEqual(op);
  });

  it('EDU-IDEM-9: retries within the lifetime reuse the operation (and so its key)', () => {
    const clock = controlledClock();
    const op = startOutgoingOperation(Buffer.from('payload'), SEVEN_DAYS, clock);
    clock.advance(3 * 24 * 3600 * 1000);
    expect(mayRetry(op, Buffer.from('payload'), clock)).toBe(true);
    expect(mayRetry(op, 'payload', clock)).toBe(true);
  });

  it('EDU-IDEM-11: the key may not be sent with another payload', () => {
    const clock = controlledClock();
    const op = startOutgoingOperation('{"id":"1"}', SEVEN_DAYS, clock);
    expect(mayRetry(op, '{"id":"2"}', clock)).toBe(false);
    expect(mayRetry(op, '{"id":"1"} ', clock)).toBe(false);
  });

  it('EDU-IDEM-12: automatic retries stop once the TTL has passed', () => {
    const clock = controlledClock();
    const op = startOutgoingOperation('p', SEVEN_DAYS, clock);
    clock.advance(SEVEN_DAYS * 1000 - 1);
    expect(mayRetry(op, 'p', clock)).toBe(true);
    clock.advance(1);
    expect(mayRetry(op, 'p', clock)).toBe(false);
  });

  it('EDU-IDEM-13: after the TTL a new request is a new operation with a new key', () => {
    const clock = controlledClock();
    const first = startOutgoingOperation('p', SEVEN_DAYS, clock);
    clock.advance(SEVEN_DAYS * 1000);
    const second = startOutgoingOperation('p', SEVEN_DAYS, clock);
    expect(second.key).not.toBe(first.key);
    expect(mayRetry(second, 'p', clock)).toBe(true);
  });
});
