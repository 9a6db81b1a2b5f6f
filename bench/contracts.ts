/**
 * Contracts at work (issue 14 item 3): POST /events on the laptop host with 1 KB events whose
 * type is bound to a contract message in `enforce` mode, against the same events of a type with
 * no binding, in the same run, rounds interleaved so load drifts hit both sides alike. Goal: at
 * most 15 % slower with `enforce`. The schema is compiled once per container (the first round
 * pays it; warm-up takes that), so the difference is Ajv's validation and one JSON.parse per event.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { settingsFromEnvironment, startKoerierHost } from '../local/host.js';
import { settingEnv } from '../functions/config.js';
import { parsePublishGrants } from '../functions/core/auth/publish-grants.js';
import { InMemoryClaimCheckStore, InMemoryPayloadLedger } from '../test/support/memory/claim-check-memory-adapters.js';
import { DataContracts } from '../functions/core/contracts/data-contracts.js';
import { MemoryContractDocuments, MemoryContractStore } from '../test/support/memory/contracts-memory-adapters.js';
import { InMemoryIdempotencyStore } from '../test/support/memory/memory-idempotency-store.js';
import { acceptEvents, type IngestDependencies } from '../functions/core/ingest/index.js';
import { InMemoryRateWindow } from '../test/support/memory/ingest-memory-adapters.js';
import { callApi } from '../test/support/koerier-api.js';
import { silentLog } from '../functions/core/ports/log.js';

const EVENTS_PER_ROUND = 600;
const ROUNDS = 5;
const CONCURRENCY = 16;
const ENFORCED = 'nl.edu.leerling.ingeschreven.v1';
const UNBOUND = 'nl.edu.leerling.ingeschreven-ongebonden.v1';

const payloadSchema = {
  type: 'object',
  required: ['leerling', 'school', 'naam', 'inschrijvingen'],
  additionalProperties: false,
  properties: {
    leerling: { type: 'string', pattern: '^L-[0-9]+$' },
    school: { type: 'string', pattern: '^[0-9]{2}[A-Z]{2}$' },
    naam: {
      type: 'object',
      required: ['voornaam', 'achternaam'],
      properties: { voornaam: { type: 'string' }, achternaam: { type: 'string' } },
    },
    inschrijvingen: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['opleiding', 'vanaf', 'niveau'],
        properties: {
          opleiding: { type: 'string' },
          vanaf: { type: 'string', format: 'date' },
          niveau: { enum: ['vo', 'mbo', 'hbo', 'wo'] },
          actueel: { type: 'boolean' },
        },
      },
    },
  },
};

/** About 1 KB of data (the event's JSON text is about 1.2 KB). */
function data(index: number) {
  return {
    leerling: `L-${index}`,
    school: '12AB',
    naam: { voornaam: 'Jan Pieter', achternaam: `Jansen-${index}` },
    inschrijvingen: Array.from({ length: 9 }, (_, n) => ({
      opleiding: `Opleiding ${n} Techniek`,
      vanaf: `201${n}-09-01`,
      niveau: n % 2 ? 'mbo' : 'vo',
      actueel: n === 8,
    })),
  };
}

const event = (type: string, index: number) =>
  JSON.stringify({
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:00000001823288444000:systeem:lvs',
    type,
    datacontenttype: 'application/json',
    data: data(index),
  });

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * The ingest use case alone (functions/core/ingest on memory adapters: no HTTP, no token, no
 * emulators), so the CPU the check adds is measured against the CPU the ingest spends anyway,
 * without the emulators' latency hiding it. Many short interleaved rounds: a shared machine's
 * load moves both sides alike, and the median ratio of neighbouring rounds is kept.
 */
export async function inProcess(): Promise<Record<string, unknown>> {
  const store = new MemoryContractStore();
  const documents = new MemoryContractDocuments();
  await documents.putSchemas('inschrijvingen', '1.0.0', { ingeschreven: payloadSchema });
  await store.putBinding({
    type: ENFORCED,
    contract: 'inschrijvingen',
    version: '1.0.0',
    message: 'ingeschreven',
    mode: 'enforce',
    updatedAt: '',
    updatedBy: '',
  });
  const deps: IngestDependencies = {
    idempotency: new InMemoryIdempotencyStore(),
    rateWindow: new InMemoryRateWindow(() => Date.now()),
    inbound: { send: async () => undefined },
    claimCheck: {
      store: new InMemoryClaimCheckStore(),
      ledger: new InMemoryPayloadLedger(),
      publicBaseUrl: 'https://koerier.example',
      retentionSeconds: 86400,
    },
    settings: {
      publishRatePerMinute: 100_000_000,
      maxEventBytes: 64 * 1024,
      inlineEventBytes: 64 * 1024,
      maxQueuedEventBytes: 248 * 1024,
      publishGrants: parsePublishGrants(JSON.stringify({ bench: ['urn:nld:oin:00000001823288444000'] })),
      idempotency: { ttlSeconds: 3600, lockSeconds: 60 },
    },
    log: silentLog,
    dataContracts: new DataContracts({ store, documents, refreshMs: 30_000, clock: () => Date.now(), log: silentLog }),
  };
  const principal = { clientId: 'bench', scopes: new Set(['events:publish']) };
  const bodies = (type: string) => Array.from({ length: 500 }, (_, index) => Buffer.from(event(type, index)));
  const round = async (requests: Buffer[]) => {
    const started = performance.now();
    for (const body of requests) {
      const answer = await acceptEvents(
        {
          method: 'POST',
          path: '/events',
          headers: { 'content-type': 'application/cloudevents+json', 'idempotency-key': randomUUID() },
          query: {},
          routeKey: 'POST /events',
          pathParameters: {},
          body,
        },
        principal,
        deps,
      );
      if (answer.status !== 202) throw new Error(`ingest answered ${answer.status}`);
    }
    return requests.length / ((performance.now() - started) / 1000);
  };
  const enforcedBodies = bodies(ENFORCED);
  const unboundBodies = bodies(UNBOUND);
  for (let warm = 0; warm < 3; warm++) await Promise.all([round(enforcedBodies), round(unboundBodies)]);
  const ratios: number[] = [];
  const enforced: number[] = [];
  const unbound: number[] = [];
  for (let index = 0; index < 21; index++) {
    const first = index % 2 === 0 ? await round(unboundBodies) : await round(enforcedBodies);
    const second = index % 2 === 0 ? await round(enforcedBodies) : await round(unboundBodies);
    const [withEnforce, without] = index % 2 === 0 ? [second, first] : [first, second];
    enforced.push(withEnforce);
    unbound.push(without);
    ratios.push(withEnforce / without);
  }
  return {
    description:
      'acceptEvents on memory adapters (parse, validate, grants, contract check, idempotency in memory), 500 single-event requests per round, 21 interleaved pairs.',
    enforceMedianEventsPerSecond: Math.round(median(enforced)),
    noBindingMedianEventsPerSecond: Math.round(median(unbound)),
    medianRatioEnforceToNoBinding: Number(median(ratios).toFixed(3)),
  };
}

export async function run(): Promise<Record<string, unknown>> {
  const useCase = await inProcess();
  const stateDir = await mkdtemp(join(tmpdir(), 'koerier-bench-contracts-'));
  const host = await startKoerierHost({
    port: 0,
    stateDir,
    configFile: join(stateDir, 'koerier.local.json'),
    log: () => {},
    queueTriggers: false,
    // The publisher's rate window (6,000 a minute by default) would refuse a fast run: the benchmark measures the check, not the limit.
    settings: { ...settingsFromEnvironment(process.env), [settingEnv.publishRatePerMinute]: '1000000' },
  });
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  try {
    const token = await host.issueToken('dev-publisher');
    const writer = await host.issueToken('bench-registry', ['contracts:read', 'contracts:write']);
    // The setup (contract and binding) through the generated client; only the rounds below are measured.
    const call = async (method: string, path: string, body: unknown, bearer = writer) => {
      const answer = await callApi(host.url, bearer, method, path, body);
      if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
    };
    const document = {
      asyncapi: '3.0.0',
      info: { title: 'Inschrijvingen', version: '1.0.0' },
      channels: {
        inschrijvingen: {
          address: 'inschrijvingen',
          messages: { ingeschreven: { $ref: '#/components/messages/ingeschreven' } },
        },
      },
      operations: { send: { action: 'send', channel: { $ref: '#/channels/inschrijvingen' } } },
      components: { messages: { ingeschreven: { name: ENFORCED, payload: payloadSchema } } },
    };
    const owner = { name: 'Bench', email: 'bench@example.org' };
    await call('PUT', '/contracts/inschrijvingen/versions/1.0.0', {
      kind: 'asyncapi-data',
      owner,
      contact: owner,
      document,
    });
    await call('PUT', `/contract-bindings/${ENFORCED}`, {
      contract: 'inschrijvingen',
      version: '1.0.0',
      mode: 'enforce',
    });

    let refusedAsExpected = 0;
    const post = async (body: string, expected = 202) => {
      const response = await request(`${host.url}/events`, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          authorization: `Bearer ${token}`,
          'idempotency-key': randomUUID(),
          'content-type': 'application/cloudevents+json',
        },
        body,
      });
      await response.body.text();
      if (response.statusCode !== expected) throw new Error(`ingest answered ${response.statusCode}, not ${expected}`);
      if (expected === 400) refusedAsExpected++;
    };
    const round = async (type: string) => {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < EVENTS_PER_ROUND) await post(event(type, next++));
        }),
      );
      return EVENTS_PER_ROUND / ((performance.now() - started) / 1000);
    };

    // Warm-up: JIT, connections, the JWKS, the bindings snapshot, the compiled schema. Then proof the binding is live.
    await round(UNBOUND);
    await round(ENFORCED);
    await post(JSON.stringify({ ...JSON.parse(event(ENFORCED, 1)), data: { leerling: 'x' } }), 400);

    const enforced: number[] = [];
    const unbound: number[] = [];
    for (let index = 0; index < ROUNDS; index++) {
      // Alternating which goes first, so neither side always follows the other's queue build-up.
      if (index % 2 === 0) {
        unbound.push(await round(UNBOUND));
        enforced.push(await round(ENFORCED));
      } else {
        enforced.push(await round(ENFORCED));
        unbound.push(await round(UNBOUND));
      }
    }
    const enforcedMedian = median(enforced);
    const unboundMedian = median(unbound);
    return {
      useCase,
      description:
        'POST /events on the laptop host, 1 KB events (about 1.2 KB of JSON), one event per request, 16 in flight: a type bound to an AsyncAPI message in enforce mode against a type with no binding, rounds interleaved.',
      eventBytes: Buffer.byteLength(event(ENFORCED, 1)),
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      eventsPerRound: EVENTS_PER_ROUND,
      enforce: { eventsPerSecondByRound: enforced.map(Math.round), medianEventsPerSecond: Math.round(enforcedMedian) },
      noBinding: { eventsPerSecondByRound: unbound.map(Math.round), medianEventsPerSecond: Math.round(unboundMedian) },
      ratioEnforceToNoBinding: Number((enforcedMedian / unboundMedian).toFixed(3)),
      goal: 'ratio at least 0.85 (at most 15 % slower)',
      invalidEventRefused: refusedAsExpected === 1,
    };
  } finally {
    await agent.close();
    await host.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
