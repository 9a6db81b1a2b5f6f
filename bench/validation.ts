/**
 * Parse + validate throughput of Koerier's CloudEvents core against the official SDK
 * (`cloudevents` npm package: `HTTP.toEvent(...)` then `event.validate()`) on the same mixed set
 * of requests: structured and binary mode, small events and events with ~4 KB of JSON data.
 *
 * Koerier checks more than the SDK: the NL GOV profile (reverse-DNS type, version segments,
 * `nld` URN warnings), CE-2 string characters, 32-bit integers, URI grammar of source/dataref/
 * dataschema, RFC 3339 ranges, base64, the UTF-8 of the body and the per-event size limit, and it
 * builds each event's JSON format text. It proves an event's `data` to be JSON without building
 * it (json-syntax.ts), where the SDK and the floor have JSON.parse build it. The SDK is given the
 * body already decoded to a string (what its API takes); Koerier starts from the raw Buffer. Beside both, the floor of issue 15:
 * the same bytes decoded and parsed once with JSON.parse, nothing checked (goal: Koerier at 0.7×
 * the floor or better, while staying 3× the SDK). Run: `npx tsx bench/validation.ts`.
 *
 * Time is this process's CPU time, not the wall clock: the bench machine is shared, and another
 * process's load stretched wall-clock rounds by up to half while the CPU time stayed put.
 */
import { HTTP, type CloudEvent } from 'cloudevents';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCloudEventsRequest } from '../functions/core/cloudevents/index.js';

interface BenchRequest {
  readonly kind: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly bodyText: string;
}

const REQUESTS_IN_SET = 400;
const WARMUP_MS = 1500;
const ROUND_MS = 1000;
const ROUNDS = 7;
const KIND_ROUNDS = 5;
const KIND_ROUND_MS = 300;
const OPTIONS = { maxEventBytes: 64 * 1024 };
/** Issue 15: at least 0.7× the floor, and at least 3× the SDK. */
const GOAL_RATIO_TO_FLOOR = 0.7;
const GOAL_SDK_RATIO = 3;

/** ~4 KB of realistic JSON data: a person record with an address history. */
function largeData(i: number): Record<string, unknown> {
  return {
    bsn: String(999990000 + i),
    naam: { voornamen: 'Jan Pieter', voorvoegsel: 'van', geslachtsnaam: `Jansen-${i}` },
    geboorte: { datum: '1984-03-12', plaats: 'Nijmegen', land: 'Nederland' },
    adressen: Array.from({ length: 18 }, (_, n) => ({
      straat: `Burgemeester Weertsstraat ${n}`,
      huisnummer: 10 + n,
      postcode: `65${10 + n}AB`,
      woonplaats: n % 2 === 0 ? 'Nijmegen' : 'Arnhem',
      vanaf: `20${10 + (n % 10)}-0${1 + (n % 9)}-15`,
      actueel: n === 0,
    })),
  };
}

function smallData(i: number): Record<string, unknown> {
  return { zaak: `ZAAK-${i}`, status: 'afgehandeld', gecontroleerd: i % 2 === 0 };
}

function attributes(i: number): Record<string, string> {
  return {
    specversion: '1.0',
    id: `f3dce042-cd6e-4977-844d-${String(i).padStart(12, '0')}`,
    source: 'urn:nld:oin:00000001823288444000:systeem:BRP-component',
    type: 'nl.overheid.zaken.zaakstatus-gewijzigd',
    subject: String(999990000 + i),
    time: `2025-12-10T17:${String(i % 60).padStart(2, '0')}:00Z`,
  };
}

function structured(i: number, data: Record<string, unknown>, kind: string): BenchRequest {
  const bodyText = JSON.stringify({
    ...attributes(i),
    nlbrpnationaliteit: '0083',
    datacontenttype: 'application/json',
    data,
  });
  return {
    kind,
    headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' },
    body: Buffer.from(bodyText),
    bodyText,
  };
}

function binary(i: number, data: Record<string, unknown>, kind: string): BenchRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(attributes(i))) headers[`ce-${name}`] = value;
  headers['ce-nlbrpnationaliteit'] = '0083';
  const bodyText = JSON.stringify(data);
  return { kind, headers, body: Buffer.from(bodyText), bodyText };
}

/** 40% structured small, 20% structured ~4 KB, 25% binary small, 15% binary ~4 KB. */
function requestSet(): BenchRequest[] {
  const requests: BenchRequest[] = [];
  for (let i = 0; i < REQUESTS_IN_SET; i++) {
    const slot = i % 20;
    if (slot < 8) requests.push(structured(i, smallData(i), 'structured-small'));
    else if (slot < 12) requests.push(structured(i, largeData(i), 'structured-4k'));
    else if (slot < 17) requests.push(binary(i, smallData(i), 'binary-small'));
    else requests.push(binary(i, largeData(i), 'binary-4k'));
  }
  return requests;
}

function koerier(request: BenchRequest): void {
  // A refused request throws a KoerierError, which ends the run: every request here is valid.
  parseCloudEventsRequest(request, OPTIONS);
}

/** The floor (issue 15): what any JSON gateway must do with the same request — decode the bytes and parse them once. */
let floorSink = 0;
function floor(request: BenchRequest): void {
  const parsed = JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
  floorSink += parsed === null ? 0 : 1;
}

function sdk(request: BenchRequest): void {
  const event = HTTP.toEvent({ headers: request.headers, body: request.bodyText }) as CloudEvent<unknown>;
  if (event.validate() !== true) throw new Error(`The SDK rejected a ${request.kind} request`);
}

/** CPU time of this process, in microseconds (all its threads, so garbage collection counts). */
function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** Events per CPU second over whole passes through the set, for at least `ms` milliseconds of CPU time. */
function throughput(parse: (request: BenchRequest) => void, requests: readonly BenchRequest[], ms: number): number {
  let events = 0;
  const started = cpuMicros();
  const until = started + ms * 1000;
  let now = started;
  while (now < until) {
    for (const request of requests) parse(request);
    events += requests.length;
    now = cpuMicros();
  }
  return events / ((now - started) / 1e6);
}

/**
 * CPU microseconds per event of each kind of request, Koerier's and the floor's, alternating as the
 * rounds above do: where the set's ratio comes from. A small event's floor is one short JSON.parse,
 * so what Koerier does per event whatever its size (each attribute's grammar, the headers of binary
 * mode) weighs most there.
 */
function perKind(
  requests: readonly BenchRequest[],
): Record<string, { koerierMicros: number; floorMicros: number; ratioToFloor: number }> {
  const kinds: Record<string, { koerierMicros: number; floorMicros: number; ratioToFloor: number }> = {};
  for (const kind of [...new Set(requests.map((request) => request.kind))]) {
    const ofKind = requests.filter((request) => request.kind === kind);
    const koerierMicros: number[] = [];
    const floorMicros: number[] = [];
    for (let round = 0; round < KIND_ROUNDS; round++) {
      koerierMicros.push(1e6 / throughput(koerier, ofKind, KIND_ROUND_MS));
      floorMicros.push(1e6 / throughput(floor, ofKind, KIND_ROUND_MS));
    }
    const koerierMedian = median(koerierMicros);
    const floorMedian = median(floorMicros);
    kinds[kind] = {
      koerierMicros: Number(koerierMedian.toFixed(2)),
      floorMicros: Number(floorMedian.toFixed(2)),
      ratioToFloor: Number((floorMedian / koerierMedian).toFixed(2)),
    };
  }
  return kinds;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function run(): Promise<Record<string, unknown>> {
  const requests = requestSet();
  // Both must accept every request, or the comparison is meaningless.
  for (const request of requests) {
    koerier(request);
    sdk(request);
  }
  throughput(koerier, requests, WARMUP_MS);
  throughput(sdk, requests, WARMUP_MS);
  throughput(floor, requests, WARMUP_MS);
  const koerierRounds: number[] = [];
  const sdkRounds: number[] = [];
  const floorRounds: number[] = [];
  // Alternate, so drift in machine load hits all three alike.
  for (let round = 0; round < ROUNDS; round++) {
    koerierRounds.push(throughput(koerier, requests, ROUND_MS));
    sdkRounds.push(throughput(sdk, requests, ROUND_MS));
    floorRounds.push(throughput(floor, requests, ROUND_MS));
  }
  const byKind = perKind(requests);
  const koerierEventsPerSecond = Math.round(median(koerierRounds));
  const sdkEventsPerSecond = Math.round(median(sdkRounds));
  const floorEventsPerSecond = Math.round(median(floorRounds));
  if (floorSink === 0) throw new Error('the floor parsed nothing');
  const ratioToFloor = Number((koerierEventsPerSecond / floorEventsPerSecond).toFixed(2));
  const kinds: Record<string, number> = {};
  for (const request of requests) kinds[request.kind] = (kinds[request.kind] ?? 0) + 1;
  const ratio = Number((koerierEventsPerSecond / sdkEventsPerSecond).toFixed(2));
  return {
    description:
      'parseCloudEventsRequest vs cloudevents SDK HTTP.toEvent + validate(), same requests, median of rounds',
    clock: 'process CPU time (process.cpuUsage), events per CPU second',
    requests: {
      total: requests.length,
      byKind: kinds,
      averageBodyBytes: Math.round(requests.reduce((n, r) => n + r.body.length, 0) / requests.length),
    },
    rounds: ROUNDS,
    koerierEventsPerSecond,
    baselineEventsPerSecond: sdkEventsPerSecond,
    baseline: 'cloudevents@10 HTTP.toEvent + CloudEvent.validate()',
    ratio,
    target: GOAL_SDK_RATIO,
    meetsTarget: ratio >= GOAL_SDK_RATIO,
    floorEventsPerSecond,
    floor:
      "the same requests' bytes decoded (Buffer.toString('utf8')) and parsed once with JSON.parse, nothing checked",
    ratioToFloor,
    byKind,
    goalRatioToFloor: GOAL_RATIO_TO_FLOOR,
    goalSdkRatio: GOAL_SDK_RATIO,
    meetsIssue15Goal: ratioToFloor >= GOAL_RATIO_TO_FLOOR && ratio >= GOAL_SDK_RATIO,
    note: 'Koerier checks more than the SDK (NL GOV profile rules, CE-2 characters, URI/RFC 3339/base64 grammar, UTF-8, size) and builds the JSON format text; it proves data to be JSON without building it (functions/core/cloudevents/json-syntax.ts), which the SDK and the floor build with JSON.parse; the SDK gets the body pre-decoded as a string.',
  };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await run(), null, 2));
}
