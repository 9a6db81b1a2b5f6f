import { run } from './_latency-probe.ts';
const r = await run();
console.log(JSON.stringify((r as any).otherKeysWhileOneBlocked, (k, v) => (Array.isArray(v) && typeof v[0] === 'number' ? undefined : v)));
process.exit(0);
