/**
 * The cost model at `koerier:batchSizes` `{"router": 100}` (issue 15, items 3 and 5): the same
 * scenarios as bench/cost.ts on a host whose router poller gathers up to 100 events in its 1 s
 * window, as a deployment's event source then does. The router's per-invocation requests — the
 * archive's PutObject, the route index read, the ledger's commit and the event source's own receive
 * and delete — are then shared by up to 100 events instead of 10. The traffic must fill the window
 * for that: 200 events published four requests at a time, well above 100 a second on the laptop.
 * Its scenarios stand beside the default run's in docs/COST.md. `npm run bench -- cost-router-batches`.
 */
import { run as runCostScenarios } from './cost.js';

export async function run(): Promise<Record<string, unknown>> {
  return runCostScenarios({
    batchSizes: { router: 100 },
    events: 200,
    scenarios: ['ingestOnly', 'push1Batch10', 'push1'],
    variant: { name: 'RouterBatch100', description: '; router batches of up to 100 (koerier:batchSizes)' },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
