/**
 * Issue 32, "POST /subscriptions/filters/test": on the laptop host, a subscriber tries filters on
 * events it gives and on the newest archived events it may receive. Which events match is worked
 * out here from how each event was made, not by Koerier's CESQL engine. The subscriber is entitled
 * to `nl.edu.` only; events of `nl.overheid.` are archived beside them and must never be shown to it.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { ARCHIVE_PREFIX, decodeArchiveObject } from '../../functions/core/replay/archive-format.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, callApi, publishEvents, type ApiAnswer } from '../support/koerier-api.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';
import { eventually } from '../support/waiting.js';

const SOURCE = `urn:nld:oin:00000001234567890000:systeem:filter-test-${randomUUID().slice(0, 8)}`;
const LEERLING = 'nl.edu.leerling.ingeschreven.v1';
const ZAAK = 'nl.overheid.zaken.zaak.aangemaakt.v1';
const SQL = "type LIKE 'nl.edu.leerling.%' AND schoolcode = '12AB'";

interface Made {
  readonly id: string;
  readonly type: string;
  readonly schoolcode?: string;
}

let koerier: TestHost;
let cli: CliUser;
let subscriber: string;
const made: Made[] = [];

function api(body: unknown, token = subscriber): Promise<ApiAnswer> {
  return callApi(koerier.url, token, 'POST', '/subscriptions/filters/test', body);
}

interface Tested {
  id: string;
  type: string;
  matches: boolean;
  filters: boolean[];
  acceptedAt?: string;
  sqlErrors?: { filter: string; error: string }[];
}

beforeAll(async () => {
  koerier = await startTestHost({
    [settingEnv.entitlements]: JSON.stringify({ 'dev-subscriber': [{ typePrefix: 'nl.edu' }] }),
  });
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  const publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
  // Twelve events, one request each so their acceptance order is the order made: the newest are zaken.
  for (let i = 0; i < 12; i++) {
    const event: Made =
      i % 3 === 2
        ? { id: `zaak-${i}-${randomUUID()}`, type: ZAAK, schoolcode: '12AB' }
        : { id: `leerling-${i}-${randomUUID()}`, type: LEERLING, ...(i % 3 === 0 ? { schoolcode: '12AB' } : {}) };
    made.push(event);
    await publishEvents(publisher, { specversion: '1.0', source: SOURCE, ...event, data: { n: i } });
  }
  await eventually('all 12 events archived', async () => (await archivedIds()).size >= 12, {
    timeoutMs: 60_000,
    intervalMs: 300,
  });
}, 120_000);

afterAll(async () => {
  await cli?.remove();
  await koerier?.stop();
});

/** The ids of this file's events in the archive: the router archives a batch before it routes it. */
async function archivedIds(): Promise<Set<string>> {
  const archive = koerier.host.dependencies.eventArchive;
  const objects = await Promise.all((await archive.list(ARCHIVE_PREFIX)).map((key) => archive.get(key)));
  return new Set(
    objects
      .flatMap((body) => (body ? decodeArchiveObject(body) : []))
      .flatMap((e) => (e.source === SOURCE ? [e.id] : [])),
  );
}

describe('issue 32: POST /subscriptions/filters/test', () => {
  it('CESQL-7, issue 32 (filter test): says per given event which filters match, whether all do, and which sql expression raised an evaluation error', async () => {
    const events = made.slice(0, 3).map((e) => ({ specversion: '1.0', source: SOURCE, ...e }));
    const answer = await api({ filters: [{ sql: SQL }, { prefix: { type: 'nl.edu.' } }], events });
    expect(answer.status, answer.text).toBe(200);
    const tested = answer.body['events'] as Tested[];
    // Made 0: leerling with 12AB; made 1: leerling without schoolcode; made 2: zaak with 12AB.
    expect(tested.map((e) => [e.id, e.matches, e.filters])).toEqual([
      [made[0]!.id, true, [true, true]],
      [made[1]!.id, false, [false, true]],
      [made[2]!.id, false, [false, false]],
    ]);
    // No schoolcode: CESQL raises a missingAttribute error, and an expression that errs does not match.
    expect(tested[1]!.sqlErrors).toEqual([{ filter: 'filters[0].sql', error: 'missingAttribute' }]);
    expect(tested[0]!.sqlErrors).toBeUndefined();
    expect(answer.body).toMatchObject({ tested: 3, matched: 1 });
    // Given events are the caller's own: a type outside its entitlement is tried all the same.
    expect(tested[2]!.type).toBe(ZAAK);
  });

  it('CESQL-7, issue 32 (filter test): tries the newest archived events the caller may receive, newest first, and never shows one outside its entitlement', async () => {
    const answer = await api({ filters: [{ sql: SQL }], archived: { last: 1000 } });
    expect(answer.status, answer.text).toBe(200);
    const ours = (answer.body['events'] as Tested[]).filter((e) => made.some((m) => m.id === e.id));
    const visible = made.filter((e) => e.type === LEERLING);
    // Newest first: the reverse of the order published.
    expect(ours.map((e) => e.id)).toEqual(visible.map((e) => e.id).reverse());
    expect(ours.map((e) => e.matches)).toEqual(visible.map((e) => e.schoolcode === '12AB').reverse());
    // Not one event of a type the subscriber is not entitled to, though the archive holds them.
    expect((answer.body['events'] as Tested[]).filter((e) => !e.type.startsWith('nl.edu.'))).toEqual([]);
    const archive = answer.body['archive'] as { last: number; scanned: number; complete: boolean };
    expect(archive.complete).toBe(true);
    expect(archive.scanned).toBeGreaterThanOrEqual(made.length);
    expect(ours.every((e) => typeof e.acceptedAt === 'string')).toBe(true);

    const newest = await api({ filters: [], archived: { last: 2 } });
    expect(newest.status, newest.text).toBe(200);
    expect((newest.body['events'] as Tested[]).map((e) => e.id)).toEqual(
      visible
        .slice(-2)
        .map((e) => e.id)
        .reverse(),
    );
  });

  it('CESQL-7, issue 32 (filter test): an invalid sql filter is the 400 a subscription with it gets, naming the filter, the position and what was expected', async () => {
    const filters = [{ exact: { type: LEERLING } }, { sql: "type = 'a' OR type = 'b' AND x" }];
    const answer = await api({ filters, archived: { last: 10 } });
    expect(answer.status).toBe(400);
    expect(answer.body['type']).toBe('/v1/problems/invalid-subscription');
    const errors = answer.body['errors'] as { attribute: string; rule: string; message: string }[];
    expect(errors).toEqual([
      expect.objectContaining({
        attribute: 'filters[1].sql',
        rule: 'cesql',
        message: expect.stringContaining('at position 26: expected OR or parentheses') as unknown,
      }),
    ]);
    const subscription = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      delivery: 'pull',
      filters,
    });
    expect(subscription.status).toBe(400);
    expect(subscription.body['type']).toBe(answer.body['type']);
    expect(subscription.body['errors']).toEqual(errors);
  });

  it('CESQL-7, issue 32 (filter test): the limits: at most 1000 archived, 100 given events, 256 KiB of body, events or archived, and the scope of making a subscription', async () => {
    const one = { specversion: '1.0', id: 'x', source: SOURCE, type: LEERLING };
    const refusals: [string, unknown, number][] = [
      ['archived.last over 1000', { filters: [], archived: { last: 1001 } }, 400],
      ['archived.last 0', { filters: [], archived: { last: 0 } }, 400],
      ['101 events', { filters: [], events: Array.from({ length: 101 }, () => one) }, 400],
      ['both events and archived', { filters: [], events: [one], archived: { last: 1 } }, 400],
      ['neither', { filters: [] }, 400],
      ['an event without a type', { filters: [], events: [{ specversion: '1.0', id: 'x', source: SOURCE }] }, 400],
      ['a body over 256 KiB', { filters: [], events: [{ ...one, data: 'x'.repeat(262_144) }] }, 413],
    ];
    for (const [what, body, status] of refusals) {
      const answer = await api(body);
      expect(answer.status, `${what}: ${answer.text}`).toBe(status);
    }
    const hundred = await api({ filters: [], events: Array.from({ length: 100 }, () => one) });
    expect(hundred.status, hundred.text).toBe(200);
    expect(hundred.body['matched']).toBe(100);
    const thousand = await api({ filters: [], archived: { last: 1000 } });
    expect(thousand.status, thousand.text).toBe(200);

    const readOnly = await koerier.token('dev-subscriber', ['subscriptions:read']);
    expect((await api({ filters: [], archived: { last: 1 } }, readOnly)).status).toBe(403);
  });
});

describe('issue 32: koerier filter test on the gateway', () => {
  it('CESQL-7, issue 32 (filter test): koerier filter test --archived N asks the gateway about the newest archived events the caller may receive', async () => {
    cli ??= await cliUser(koerier.url);
    const env = {
      KOERIER_CLIENT_ID: 'dev-subscriber',
      KOERIER_CLIENT_SECRET: koerier.host.localConfig.clients['dev-subscriber']!.secret,
    };
    const archived = await cli.run(['--json', 'filter', 'test', '--sql', SQL, '--archived', '1000'], { env });
    expect(archived.code, archived.stderr).toBe(0);
    const answer = JSON.parse(archived.stdout) as { events: Tested[]; matched: number };
    const ours = answer.events.filter((e) => made.some((m) => m.id === e.id));
    const visible = made.filter((e) => e.type === LEERLING);
    expect(ours.map((e) => [e.id, e.matches])).toEqual(visible.map((e) => [e.id, e.schoolcode === '12AB']).reverse());
    expect(answer.events.filter((e) => e.type === ZAAK)).toEqual([]);

    // Given events, judged by the gateway: a zaak the caller may not receive is tried all the same.
    const file = join(cli.cwd, 'events.jsonl');
    await writeFile(
      file,
      made
        .slice(0, 3)
        .map((e) => JSON.stringify({ specversion: '1.0', source: SOURCE, ...e }))
        .join('\n'),
    );
    const given = await cli.run(['filter', 'test', '--server', '--sql', SQL, file], { env });
    expect(given.code, given.stderr).toBe(0);
    expect(given.stderr).toContain('1 of 3 events match');
    expect(given.stdout).toContain('filters[0].sql: missingAttribute');

    const invalid = await cli.run(['filter', 'test', '--sql', "type = 'a' OR type = 'b' AND x", '--archived', '5'], {
      env,
    });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('filters[0].sql: "sql" is not a CESQL v1 expression at position 26');
    // Three runs of the real binary, each starting tsx: on two loaded cores that takes most of a minute.
  }, 120_000);
});
