/**
 * Issue 33, must show: "a test with 50 keys × 100 events published concurrently over 20
 * connections to a push and a pull subscriber: every key's events arrive in acceptance order, none
 * lost, none twice past a settled delivery; the sequence has no gaps." One laptop host, one event
 * type, an ordered push subscription (an HTTPS receiver answering 204) and an ordered pull
 * subscription (CONSUMERS consumers receiving and acknowledging side by side) both taking it; each
 * key's events are published one after another, each after the previous 202.
 *
 * The size is chosen by the environment: `KOERIER_ORDERED_FULL=1` (`npm run test:ordered-full`)
 * runs the 50 × 100 over 20 connections, which takes minutes on the laptop (ordered
 * delivery runs at tens of events per second there; docs/ORDERING.md, "Measured"); without it, CI
 * runs 20 keys × 5 events over the same 20 connections to both subscribers. The smaller
 * ordered-push and ordered-pull tests look at each path on its own.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { LATE_APPEND_MESSAGE } from '../../functions/core/ordering/lane-settling.js';
import { callApi } from '../support/koerier-api.js';
import { publishKeysInTurn } from '../support/keyed-deliveries.js';
import { startTestHost, type TestHost } from '../support/host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';

const FULL = process.env['KOERIER_ORDERED_FULL'] === '1';
/** The run's size: KEYS keys × EVENTS events, published over CONNECTIONS connections at once. */
const KEYS = FULL ? 50 : 20;
const EVENTS = FULL ? 100 : 5;
const CONNECTIONS = 20;
const CONSUMERS = 4;
/** How long a consumer keeps what it received locked before acknowledging it. */
const HOLD_MS = 100;
/** How long both subscribers may take to get everything, from the first publish. */
const TIMEOUT_MS = FULL ? 45 * 60_000 : 150_000;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e';

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let receiver: HttpsReceiver;

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.publishRatePerMinute]: '1000000',
      // As in ordered-push.test.ts: the window covers the inbound queue's latency on 2 shared cores.
      [settingEnv.orderingSettlingMs]: '3000',
      // Thousands of requests: only warnings (among them a late append's) are logged.
      [settingEnv.logLevel]: 'warn',
    },
    { trustAuthority: authority },
  );
  receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
});

/** An event as a subscriber gets it. */
interface Received {
  readonly partitionkey: string;
  readonly sequence: string;
  readonly data: { readonly n: number };
}

/** What one subscriber got of each key, as it came: event n of the key, and its sequence. */
type Arrivals = Map<string, Received[]>;

const count = (arrivals: Arrivals) => [...arrivals.values()].reduce((sum, list) => sum + list.length, 0);

/** Lost, twice and gaps per subscriber, counted before the assertions so that a failing run prints them too. */
function tally(arrivals: Arrivals) {
  let lost = 0;
  let twice = 0;
  let gaps = 0;
  let outOfOrder = 0;
  for (let k = 0; k < KEYS; k++) {
    const ofKey = arrivals.get(`key-${k}`) ?? [];
    const ns = new Set(ofKey.map((e) => e.data.n));
    lost += EVENTS - ns.size;
    twice += ofKey.length - ns.size;
    const sequences = [...new Set(ofKey.map((e) => Number(e.sequence)))].sort((a, b) => a - b);
    gaps += sequences.filter((s, i) => s !== i + 1).length > 0 ? 1 : 0;
    outOfOrder += ofKey.some((e, i) => i > 0 && e.data.n < ofKey[i - 1]!.data.n) ? 1 : 0;
  }
  return { lost, twice, keysWithGaps: gaps, keysOutOfOrder: outOfOrder };
}

function expectEveryKeyInOrder(arrivals: Arrivals): void {
  const inOrder = Array.from({ length: EVENTS }, (_, i) => [i + 1, String(i + 1).padStart(10, '0')]);
  for (let k = 0; k < KEYS; k++)
    // As they arrived: [published as event n of the key, sequence].
    expect({ key: k, arrived: (arrivals.get(`key-${k}`) ?? []).map((e) => [e.data.n, e.sequence]) }).toEqual({
      key: k,
      arrived: inOrder,
    });
}

describe(`ordered delivery at the must-show's size (issue 33${FULL ? ', full size' : ''})`, () => {
  it(
    `ORD-3, ORD-5: ${KEYS} keys × ${EVENTS} events over ${CONNECTIONS} connections to a push and a pull subscriber: every key in acceptance order at both, none lost, none twice past a 2xx or an acknowledgement, sequence 1..${EVENTS} without a gap`,
    async () => {
      const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
      const type = `nl.example.ordered-size.${randomUUID().slice(0, 8)}.v1`;
      const push = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
        sink: receiver.url,
        types: [type],
        validation: 'agreed',
        sinkcredential: receiver.sinkCredential,
        ordering: { key: 'partitionkey' },
      });
      expect(push.status).toBe(201);
      const pull = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
        delivery: 'pull',
        types: [type],
        ordering: { key: 'partitionkey' },
      });
      expect(pull.status).toBe(201);
      const pullId = pull.body['id'] as string;

      const pushed: Arrivals = new Map();
      let read = 0;
      /** The receiver's requests since the last look, added to `pushed` in the order they came. */
      const readPushed = () => {
        for (; read < receiver.requests.length; read++) {
          const event = JSON.parse(receiver.requests[read]!.body) as Received;
          pushed.set(event.partitionkey, [...(pushed.get(event.partitionkey) ?? []), event]);
        }
        return pushed;
      };

      /** Per key: the event locked now (received, its acknowledgement not yet sent), and what was acknowledged, in order. */
      const locked = new Map<string, Received>();
      const pulled: Arrivals = new Map();
      const overlaps: string[] = [];
      let done = false;
      /** Answers other than 200 to a receive or an acknowledgement: a consumer logs them and goes on, as a real one would. */
      const refusals: string[] = [];
      const refused = async (what: string, answer: { status: number; text: string }) => {
        refusals.push(`${what} ${answer.status}: ${answer.text.slice(0, 300)}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      };
      const consume = async () => {
        while (!done) {
          const answer = await callApi(koerier.url, subscriber, 'POST', `/subscriptions/${pullId}/events/receive`, {
            maxevents: 20,
            waitseconds: 1,
            lockseconds: 30,
          });
          // Whatever a failed receive locked comes back when its lock ends.
          if (answer.status !== 200) {
            await refused('receive', answer);
            continue;
          }
          const events = answer.body['events'] as Received[];
          const locks = answer.body['locks'] as { locktoken: string }[];
          for (const event of events) {
            const held = locked.get(event.partitionkey);
            if (held !== undefined) overlaps.push(`${event.partitionkey}: ${held.data.n} and ${event.data.n}`);
            locked.set(event.partitionkey, event);
          }
          if (events.length === 0) continue;
          // Works on them a moment, locks held, so a second event of a held key would be caught here.
          await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
          // Booked as acknowledged as the acknowledgement goes out: from then on the next may come.
          for (const event of events) {
            locked.delete(event.partitionkey);
            pulled.set(event.partitionkey, [...(pulled.get(event.partitionkey) ?? []), event]);
          }
          const settled = await callApi(
            koerier.url,
            subscriber,
            'POST',
            `/subscriptions/${pullId}/events/acknowledge`,
            { locktokens: locks.map((lock) => lock.locktoken) },
          );
          const failed = settled.status === 200 ? (settled.body['failed'] as { locktoken: string }[]) : locks;
          if (failed.length > 0) {
            // Not acknowledged after all: such an event comes back when its lock ends, and is not a repeat.
            const tokens = new Set(failed.map((lock) => lock.locktoken));
            for (const [i, event] of events.entries())
              if (tokens.has(locks[i]!.locktoken)) {
                const ofKey = pulled.get(event.partitionkey)!;
                ofKey.splice(ofKey.lastIndexOf(event), 1);
              }
            await refused('acknowledge', settled);
          }
        }
      };
      const consumers = Array.from({ length: CONSUMERS }, () => consume());

      const token = await koerier.token('dev-publisher', ['events:publish']);
      const started = Date.now();
      // The full size takes minutes: where it is, every 30 s, publishing included.
      const progress = FULL
        ? setInterval(
            () =>
              console.log(
                `${(Date.now() - started) / 1000} s: push ${count(readPushed())}, pull ${count(pulled)} of ${KEYS * EVENTS}`,
              ),
            30_000,
          )
        : undefined;
      let pushedAll: number | undefined;
      let pulledAll: number | undefined;
      await publishKeysInTurn(koerier.url, token, {
        source: SOURCE,
        type,
        keys: KEYS,
        events: EVENTS,
        connections: CONNECTIONS,
      });
      const published = Date.now();
      const total = KEYS * EVENTS;
      for (const deadline = started + TIMEOUT_MS; Date.now() < deadline;) {
        if (pushedAll === undefined && count(readPushed()) >= total) pushedAll = Date.now();
        if (pulledAll === undefined && count(pulled) >= total) pulledAll = Date.now();
        if (pushedAll !== undefined && pulledAll !== undefined) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      // Anything delivered again past its 2xx or handed out again past its acknowledgement would come
      // within a moment of the rest.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      done = true;
      clearInterval(progress);
      await Promise.all(consumers);
      readPushed();

      const seconds = (until: number | undefined) =>
        until === undefined ? 'not all' : `${(until - started) / 1000} s`;
      const rate = (until: number | undefined) =>
        until === undefined ? '-' : `${Math.round((total / (until - started)) * 1000 * 10) / 10}/s`;
      const lateAppends = koerier.logs.filter((line) => line.includes(LATE_APPEND_MESSAGE)).length;
      console.log(
        `ordered at size ${KEYS}×${EVENTS} over ${CONNECTIONS} connections: published in ${(published - started) / 1000} s; ` +
          `push: all ${seconds(pushedAll)} after the first publish (${rate(pushedAll)}), ${JSON.stringify(tally(pushed))}; ` +
          `pull (${CONSUMERS} consumers): all ${seconds(pulledAll)} (${rate(pulledAll)}), ${JSON.stringify(tally(pulled))}, ` +
          `${overlaps.length} overlapping locks, ${refusals.length} receives or acknowledgements refused; late appends logged: ${lateAppends}`,
      );

      if (refusals.length > 0)
        console.log(
          `refused: ${refusals.slice(0, 5).join('\n')}\nhost errors: ${koerier.logs
            .filter((line) => line.includes('"error"'))
            .slice(0, 5)
            .join('\n')}`,
        );
      expect(overlaps).toEqual([]);
      expect({ push: tally(pushed), pull: tally(pulled) }).toEqual({
        push: { lost: 0, twice: 0, keysWithGaps: 0, keysOutOfOrder: 0 },
        pull: { lost: 0, twice: 0, keysWithGaps: 0, keysOutOfOrder: 0 },
      });
      expectEveryKeyInOrder(pushed);
      expectEveryKeyInOrder(pulled);
    },
    TIMEOUT_MS + 60_000,
  );
});
