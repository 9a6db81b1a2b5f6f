/**
 * Issue 35: docs/SCALE.md's tables are the simulation's output for the committed bench/results,
 * never typed by hand, and the simulation is deterministic for its seed.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { readResults } from '../../../bench/cost/generate.js';
import { measuredModes } from '../../../bench/scale/inputs.js';
import { renderScaleDocument } from '../../../bench/scale/scale-document.js';
import { DEFAULT_LIMITS, simulate } from '../../../bench/scale/simulation.js';

describe('docs/SCALE.md (issue 35)', () => {
  it('issue 35 simulation: the tables in docs/SCALE.md are exactly what the simulation makes of bench/results', async () => {
    const document = await readFile(new URL('../../../docs/SCALE.md', import.meta.url), 'utf8');
    expect(document).toBe(renderScaleDocument(document, await readResults()));
  });

  it('issue 35 simulation: one seed, one result; past the publish route’s throttle the rest is counted as 429s', async () => {
    const mode = measuredModes(await readResults()).single;
    const run = (seed: number) =>
      simulate({
        name: 'x',
        mode,
        subscribers: 1,
        eventsPerSecond: 1_000,
        seconds: 60,
        limits: DEFAULT_LIMITS,
        deliveryStateShards: 8,
        seed,
      });
    expect(run(7)).toEqual(run(7));
    const result = run(7);
    // 300 requests a second and a burst of 600 pass the route; the first second's 900 are more than
    // ingest's 50 reserved executions take at 68 ms each, so some of those are refused by Lambda.
    expect(result.accepted + result.refusedByLambda).toBeCloseTo(300 * 60 + 600, -1);
    expect(result.refusedByLambda).toBeGreaterThan(0);
    expect(result.accepted + result.throttledByApi + result.refusedByLambda + result.refusedByTable).toBeCloseTo(
      result.offered,
      0,
    );
    expect(result.breaks[0]).toEqual({
      second: 0,
      what: 'the publish route’s throttle (koerier:routeThrottling) answers 429',
    });
  });
});
