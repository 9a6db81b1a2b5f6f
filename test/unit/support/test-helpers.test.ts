/** The shared test helpers (test/support/waiting.ts, clocks.ts): a helper that passes wrongly hides failures everywhere. */
import { describe, expect, it } from 'vitest';
import { clockIntoMinute } from '../../support/clocks.js';
import { eventually, staysQuiet } from '../../support/waiting.js';

describe('eventually', () => {
  it('returns what the probe returned once it returns something, and polls until then', async () => {
    let calls = 0;
    const value = await eventually('the third call', () => (++calls === 3 ? { calls } : undefined), { intervalMs: 1 });
    expect(value).toEqual({ calls: 3 });
  });

  it('treats false as not yet, and fails naming what it waited for', async () => {
    await expect(eventually('a thing that never comes', () => false, { timeoutMs: 30, intervalMs: 5 })).rejects.toThrow(
      'timed out after 30 ms waiting for a thing that never comes',
    );
  });

  it('reads a description given as a function when it fails, to tell what was there instead', async () => {
    let seen = 0;
    await expect(
      eventually(
        () => `ten (saw ${seen})`,
        () => ++seen >= 10,
        { timeoutMs: 10, intervalMs: 5 },
      ),
    ).rejects.toThrow(/waiting for ten \(saw [1-9]\)/);
  });

  it('fails at once when the probe throws', async () => {
    const started = Date.now();
    await expect(
      eventually('anything', () => {
        throw new Error('the child process died');
      }),
    ).rejects.toThrow('the child process died');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('staysQuiet', () => {
  it('passes when the probe sees nothing for the whole period, and checks more than once', async () => {
    let checks = 0;
    const started = Date.now();
    await staysQuiet(
      'noise',
      () => {
        checks += 1;
        return undefined;
      },
      60,
      { intervalMs: 10 },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(60);
    expect(checks).toBeGreaterThan(2);
  });

  it('fails as soon as the probe sees something, saying what', async () => {
    const noiseAt = Date.now() + 20;
    const started = Date.now();
    await expect(
      staysQuiet('second delivery', () => Date.now() >= noiseAt && '2 requests', 5000, { intervalMs: 5 }),
    ).rejects.toThrow('expected no second delivery within 5000 ms, but saw 2 requests');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('checks once more at the end of the period', async () => {
    const noiseAt = Date.now() + 45;
    await expect(staysQuiet('late noise', () => Date.now() >= noiseAt, 50, { intervalMs: 1000 })).rejects.toThrow(
      'late noise',
    );
  });
});

describe('clockIntoMinute', () => {
  it('reads the given time past the start of a minute when made, then runs with the system clock', () => {
    let system = 1_700_000_123_456;
    const clock = clockIntoMinute(1_000, () => system);
    expect(clock() % 60_000).toBe(1_000);
    expect(clock()).toBeGreaterThanOrEqual(system);
    expect(clock() - system).toBeLessThan(60_000);
    system += 5_000;
    expect(clock() % 60_000).toBe(6_000);
  });
});
