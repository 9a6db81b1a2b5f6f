/**
 * CPU per event on its hops through Koerier, before and after issue 29 item 4 (one event text value
 * read once per hop), in one run: the code of the base commit (76d7c98, checked out by this bench
 * as a detached git worktree under tmp/ when absent) next to the working tree's, on the same events,
 * alternating rounds so both meet the same machine load.
 *
 * The pure core paths per event, no I/O (the stores and queues are in memory and answer at once):
 *
 * - router: `routeInboundEvents` for a batch of 10 inbound records, each matching 4 subscriptions
 *   (3 push, 1 pull) — read the event, claim, match, check each match may receive it, build and
 *   encode the deliveries;
 * - delivery: what the delivery function does per queued delivery before it sends — decode the
 *   message, check each event may still go (the hand-out check), the attempt record's event names,
 *   and the webhook request — structured and binary;
 * - pull: one message of a receive — decode it, the hand-out check, and its place in the answer.
 *
 * Each for a small event (no data worth speaking of) and one with about 4 KB of JSON data. Time is
 * this process's CPU time (process.cpuUsage), the fastest of the rounds.
 * Run: `npm run bench -- event-hops`, or `npx tsx bench/event-hops.ts`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BASE_COMMIT = '76d7c98';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const baseTree = path.join(root, 'tmp', `base-${BASE_COMMIT}`);

const ROUNDS = 7;
const ROUND_MS = 400;
const SUBSCRIPTIONS = 4;
const BATCH = 10;
const OWNER = 'bench-owner';
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:lvs';
const TYPE = 'nl.edu.leerling.ingeschreven.v1';
/** Inside every event's data: a parse whose text holds it read the data. */
const DATA_MARKER = 'data-marker-7f3a';

type Loose = Record<string, (...args: never[]) => unknown>;

interface Code {
  readonly routeInboundEvents: (records: unknown[], deps: unknown) => Promise<{ failedRecordIds: string[] }>;
  readonly SubscriptionMatcher: new (index: unknown) => unknown;
  readonly routeEntriesOf: (match: unknown) => { routeKey: string; shape: string }[];
  readonly encodeDeliveryMessage: (message: unknown) => string;
  readonly decodeDelivery: (body: string) => { message: { events: string[] }; events?: unknown[] };
  readonly requestWithoutToken: (parts: unknown) => { body: Buffer };
  readonly dispositionOf: (message: unknown, max: number, rejections: ReadonlyMap<string, string>) => unknown;
  readonly assembleAnswer: (entries: unknown[], maxBytes?: number) => { included: number };
  /** What the hand-out check is, in each version. */
  readonly mayGo: (subscription: unknown, event: unknown, entitlements: unknown) => boolean;
  /** The router's dependencies but the matcher and ledger, in each version's shape. */
  readonly routerPorts: (entitlements: unknown) => Record<string, unknown>;
}

async function load(tree: string): Promise<Code> {
  const at = (file: string) => import(pathToFileURL(path.join(tree, 'functions/core', file)).href) as Promise<Loose>;
  const [routing, matcher, keys, message, request, assembly] = await Promise.all([
    at('routing/route-events.ts'),
    at('routing/matcher.ts'),
    at('routing/route-keys.ts'),
    at('delivery-message/delivery-message.ts'),
    at('delivery/webhook-request.ts'),
    at('pull/receive-assembly.ts'),
  ]);
  const base = {
    routeInboundEvents: routing['routeInboundEvents'] as unknown as Code['routeInboundEvents'],
    SubscriptionMatcher: matcher['SubscriptionMatcher'] as unknown as Code['SubscriptionMatcher'],
    routeEntriesOf: keys['routeEntriesOf'] as unknown as Code['routeEntriesOf'],
    encodeDeliveryMessage: message['encodeDeliveryMessage'] as unknown as Code['encodeDeliveryMessage'],
    decodeDelivery: message['decodeDelivery'] as unknown as Code['decodeDelivery'],
    requestWithoutToken: request['requestWithoutToken'] as unknown as Code['requestWithoutToken'],
    dispositionOf: assembly['dispositionOf'] as unknown as Code['dispositionOf'],
    assembleAnswer: assembly['assembleAnswer'] as unknown as Code['assembleAnswer'],
  };
  if (existsSync(path.join(tree, 'functions/core/routing/may-receive.ts'))) {
    const [may, outbox] = await Promise.all([at('routing/may-receive.ts'), at('delivery-message/outbox.ts')]);
    const mayReceive = may['mayReceive'] as unknown as (s: unknown, e: unknown, n: unknown) => string;
    const queueOutbox = outbox['queueOutbox'] as unknown as (queues: unknown) => unknown;
    return {
      ...base,
      mayGo: (subscription, event, entitlements) => mayReceive(subscription, event, entitlements) === 'receives',
      routerPorts: (entitlements) => ({
        entitlements,
        outbox: queueOutbox({
          deliveryQueue: { send: async () => undefined },
          pullQueues: { send: async () => undefined },
        }),
      }),
    };
  }
  const [redrive, entitlementsModule] = await Promise.all([
    at('delivery/redrive.ts'),
    at('subscriptions/entitlements.ts'),
  ]);
  const eventWithheldReason = redrive['eventWithheldReason'] as unknown as (
    s: unknown,
    j: string,
    n: unknown,
  ) => unknown;
  const entitledToEvent = entitlementsModule['entitledToEvent'] as unknown as (
    o: string,
    e: unknown,
    n: unknown,
  ) => boolean;
  return {
    ...base,
    mayGo: (subscription, event, entitlements) =>
      eventWithheldReason(subscription, event as string, entitlements) === undefined,
    routerPorts: (entitlements) => ({
      isEntitled: (owner: string, event: unknown) => entitledToEvent(owner, event, entitlements),
      sendDeliveries: async () => undefined,
      sendPullDeliveries: async () => undefined,
    }),
  };
}

/** The base commit's tree, checked out beside this one (no node_modules needed: core imports none). */
function baseWorktree(): string {
  if (!existsSync(path.join(baseTree, 'functions'))) {
    execFileSync('git', ['worktree', 'add', '--detach', baseTree, BASE_COMMIT], { cwd: root, stdio: 'ignore' });
  }
  return baseTree;
}

function event(id: string, large: boolean): string {
  const data = large
    ? {
        mark: DATA_MARKER,
        leerling: {
          naam: 'Jan',
          items: Array.from({ length: 60 }, (_, i) => ({
            vak: `vak-${i}`,
            cijfer: 7.5,
            opmerking: 'goed "gedaan" \\ ok',
          })),
        },
      }
    : { mark: DATA_MARKER, leerling: '1' };
  return JSON.stringify({
    specversion: '1.0',
    id,
    source: SOURCE,
    type: TYPE,
    subject: `leerling-${id}`,
    time: '2026-11-29T08:00:00Z',
    datacontenttype: 'application/json',
    data,
  });
}

/** The route index the router reads, in memory: every subscription is under the event's type. */
function routeIndex(code: Code) {
  const candidates = Array.from({ length: SUBSCRIPTIONS }, (_, i) => ({
    subscriptionId: `00000000-0000-4000-8000-00000000000${i}`,
    owner: OWNER,
    match: { types: [TYPE] },
    contentMode: 'structured',
    batchSupported: false,
    delivery: i === SUBSCRIPTIONS - 1 ? 'pull' : 'push',
  }));
  const byKey = new Map<string, unknown[]>();
  const shapes = new Set<string>();
  for (const candidate of candidates)
    for (const entry of code.routeEntriesOf(candidate.match)) {
      byKey.set(entry.routeKey, [...(byKey.get(entry.routeKey) ?? []), candidate]);
      shapes.add(entry.shape);
    }
  return {
    readState: async () => ({ generation: 1, shapes: [...shapes] }),
    candidates: async (key: string) => byKey.get(key) ?? [],
  };
}

/** A ledger that claims every event: the router's own work, not a store's. */
const ledger = {
  claim: async () => ({ outcome: 'claimed', claimId: 'c', routingId: 'r' }),
  complete: async () => undefined,
  abandon: async () => undefined,
};

const entitlements = new Map([[OWNER, [{ typePrefix: '' }]]]);
const subscription = {
  id: '00000000-0000-4000-8000-000000000000',
  owner: OWNER,
  types: [TYPE],
  sink: 'https://target.example/hook',
  contentMode: 'structured',
  batchSupported: false,
  delivery: 'push',
};

/** The hops, each as a function doing `perCall` events' work. */
function hops(code: Code, large: boolean) {
  const records = Array.from({ length: BATCH }, (_, i) => ({ recordId: `r-${i}`, body: event(`e-${i}`, large) }));
  const matcher = new code.SubscriptionMatcher(routeIndex(code));
  const routerDeps = {
    matcher,
    ledger,
    now: () => 1_764_403_200_000,
    lockMs: 60_000,
    ttlSeconds: 3600,
    maxMessageBytes: 200_000,
    ...code.routerPorts(entitlements),
  };
  const body = code.encodeDeliveryMessage({
    version: 1,
    deliveryId: '11111111-1111-4111-8111-111111111111',
    subscriptionId: subscription.id,
    events: [event('d-1', large)],
    createdAt: 1,
  });
  const deliver = (format: 'structured' | 'binary') => () => {
    const { message, events, eventNames } = code.decodeDelivery(body) as ReturnType<Code['decodeDelivery']> & {
      eventNames: unknown[];
    };
    const texts = events ?? message.events;
    if (!texts.every((text) => code.mayGo(subscription, text, entitlements))) throw new Error('withheld');
    if (eventNames.length !== 1) throw new Error('no event name');
    const request = code.requestWithoutToken({
      message,
      ...(events ? { events } : {}),
      format,
      sink: subscription.sink,
      origin: 'koerier.example',
    });
    if (request.body.length === 0) throw new Error('empty body');
  };
  const pulled = { messageId: 'm-1', receiptHandle: 'rh-1', receiveCount: 1, body };
  const lock = {
    locktoken: 'x'.repeat(200),
    lockeduntil: '2026-11-29T08:00:00.000Z',
    deliverycount: 1,
    deliverykey: 'k',
  };
  return {
    router: {
      perCall: BATCH,
      run: async () => {
        const report = await code.routeInboundEvents(records, routerDeps);
        if (report.failedRecordIds.length > 0) throw new Error('a record failed');
      },
    },
    deliveryStructured: { perCall: 1, run: deliver('structured') },
    deliveryBinary: { perCall: 1, run: deliver('binary') },
    pull: {
      perCall: 1,
      run: () => {
        const disposition = code.dispositionOf(pulled, 10, new Map()) as {
          kind: string;
          delivery: { events: string[] };
          events?: unknown[];
        };
        const texts = disposition.events ?? disposition.delivery.events;
        if (!texts.every((text) => code.mayGo(subscription, text, entitlements))) throw new Error('withheld');
        // Past the worst case, so each event's escaped size is counted.
        const answer = code.assembleAnswer([{ event: disposition.delivery.events[0], lock }], 6000 + body.length * 2);
        if (answer.included !== 1) throw new Error('not included');
      },
    },
  };
}

type Hop = { perCall: number; run: () => unknown };

/** µs of CPU per event over a round of about `ROUND_MS`. */
async function round(hop: Hop): Promise<number> {
  let events = 0;
  const start = process.cpuUsage();
  const wall = Date.now();
  while (Date.now() - wall < ROUND_MS) {
    for (let i = 0; i < 50; i++) await hop.run();
    events += 50 * hop.perCall;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / events;
}

/**
 * How often one run of a hop hands JSON.parse a text holding the event (its id) and how often one
 * holding its data (a marker inside it), per event: counted by wrapping JSON.parse for the run.
 */
async function parsesPerEvent(hop: Hop): Promise<{ event: number; data: number }> {
  const parse = JSON.parse;
  let event = 0;
  let data = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    if (typeof text === 'string' && /"id":"[erd]-\d+"/.test(text)) event++;
    if (typeof text === 'string' && text.includes(DATA_MARKER)) data++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    await hop.run();
  } finally {
    JSON.parse = parse;
  }
  return { event: event / hop.perCall, data: data / hop.perCall };
}

export async function run(): Promise<Record<string, unknown>> {
  const [before, after] = await Promise.all([load(baseWorktree()), load(root)]);
  const results: Record<string, unknown> = {};
  const parses: Record<string, unknown> = {};
  for (const large of [false, true]) {
    const old = hops(before, large);
    const now = hops(after, large);
    for (const name of Object.keys(old) as (keyof typeof old)[]) {
      const times = { before: [] as number[], after: [] as number[] };
      await round(old[name]);
      await round(now[name]);
      for (let i = 0; i < ROUNDS; i++) {
        times.before.push(await round(old[name]));
        times.after.push(await round(now[name]));
      }
      const best = (list: number[]) => Math.round(Math.min(...list) * 100) / 100;
      const entry = { beforeMicros: best(times.before), afterMicros: best(times.after) };
      parses[`${name}.${large ? 'event4KB' : 'eventSmall'}`] = {
        before: await parsesPerEvent(old[name]),
        after: await parsesPerEvent(now[name]),
      };
      results[`${name}.${large ? 'event4KB' : 'eventSmall'}`] = {
        ...entry,
        ratio: Math.round((entry.afterMicros / entry.beforeMicros) * 100) / 100,
      };
    }
  }
  return {
    baseCommit: BASE_COMMIT,
    unit: 'µs of CPU per event (the fastest of the rounds)',
    subscriptionsPerEvent: SUBSCRIPTIONS,
    routerBatch: BATCH,
    rounds: ROUNDS,
    results,
    parsesPerEvent: {
      note: 'JSON.parse calls per event whose text holds the event (event) and its data (data)',
      ...parses,
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await run(), null, 2));
