/**
 * A pull consumer on its own (docs/PULL.md), as a separate process, so that the crash test
 * (test/e2e/pull-crash.test.ts) can kill it with SIGKILL in the middle of a run.
 *
 * It prefetches one batch: it receives the next batch before it acknowledges the one before, as a
 * consumer that works on one batch while fetching the next does. So from its first receive on it
 * always holds at least one batch unacknowledged, wherever the kill lands.
 *
 * It reports on stdout, one JSON line each, before and after each step, so the parent knows which
 * events it held and which acknowledgements may or may not have reached Koerier:
 *   {"kind":"received","at":…,"events":[{"id","locktoken","lockeduntil","deliverycount","deliverykey"}]}
 *   {"kind":"acking","ids":[…]}                    about to send the acknowledge
 *   {"kind":"acked","succeeded":[…],"failed":[…]}  Koerier's answer, by event id
 * Usage: tsx pull-crash-consumer.ts <base-url> <subscription-id> <access-token> <maxevents> <lockseconds>
 */
const [url, subscriptionId, token, maxEvents, lockSeconds] = process.argv.slice(2);
if (!url || !subscriptionId || !token || !maxEvents || !lockSeconds) {
  throw new Error(
    'usage: pull-crash-consumer.ts <base-url> <subscription-id> <access-token> <maxevents> <lockseconds>',
  );
}

interface Held {
  readonly id: string;
  readonly locktoken: string;
}

async function call(action: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/subscriptions/${subscriptionId}/events/${action}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${action} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

function report(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

async function receive(): Promise<Held[]> {
  const answer = await call('receive', {
    maxevents: Number(maxEvents),
    waitseconds: 1,
    lockseconds: Number(lockSeconds),
  });
  const events = answer['events'] as { id: string }[];
  const locks = answer['locks'] as {
    locktoken: string;
    lockeduntil: string;
    deliverycount: number;
    deliverykey: string;
  }[];
  const held = events.map((event, index) => ({ id: event.id, ...locks[index]! }));
  if (held.length > 0) report({ kind: 'received', at: Date.now(), events: held });
  return held.map(({ id, locktoken }) => ({ id, locktoken }));
}

async function acknowledge(batch: readonly Held[]): Promise<void> {
  if (batch.length === 0) return;
  report({ kind: 'acking', ids: batch.map((e) => e.id) });
  const answer = await call('acknowledge', { locktokens: batch.map((e) => e.locktoken) });
  const idOf = new Map(batch.map((e) => [e.locktoken, e.id]));
  const ids = (list: unknown) => (list as { locktoken: string }[]).map((entry) => idOf.get(entry.locktoken));
  report({ kind: 'acked', succeeded: ids(answer['succeeded']), failed: ids(answer['failed']) });
}

let previous: Held[] = await receive();
for (;;) {
  const next = await receive();
  await acknowledge(previous);
  previous = next;
}
