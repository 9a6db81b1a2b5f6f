/**
 * Review items 11 and 12 (issue 8): a fuzzer of our own against the laptop host. A few thousand
 * generated, seeded, malformed requests across every route (test/support/malformed-requests.ts),
 * sent byte for byte over bare sockets, and a set of requests broken at the HTTP level. The host
 * must answer every one without a 5xx and without dropping the connection, every 4xx must be an
 * RFC 9457 problem (application/problem+json with `type`, `title` and the same `status`), small
 * enough for the idempotency store and a Lambda response, and requests that break a rule Koerier
 * enforces must not be accepted.
 *
 * Replaying a failure: the test prints its seed and, per kind of failure, the smallest request
 * that showed it with its index. `FUZZ_SEED=<seed> FUZZ_COUNT=<n>` reruns the same requests;
 * `FUZZ_ONLY=<index>,<index>` sends only those (the generator still draws every earlier one, so
 * they are the same bytes); `FUZZ_REPORT=<file>` writes every failure as JSON.
 */
import { writeFile } from 'node:fs/promises';
import { API_BASE_PATH } from '../../functions/config/resources.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { logger } from '../../functions/app/logger.js';
import { MalformedRequests, requestDigest, type FuzzContext, type FuzzRequest } from '../support/malformed-requests.js';
import { requestBytes, sendRaw, type RawOutcome, type RawResponse } from '../support/raw-http.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const DEFAULT_SEED = 20261123;
const SEED = envInteger('FUZZ_SEED', DEFAULT_SEED);
const COUNT = envInteger('FUZZ_COUNT', 2000);
const ONLY = new Set((process.env['FUZZ_ONLY'] ?? '').split(',').filter(Boolean).map(Number));
/** Requests in flight at once: enough to overlap the emulators' latency on 2 cores. */
const CONCURRENCY = 8;
/**
 * The largest problem answer: an error answer is stored for replays in one DynamoDB item (400 KB
 * with its key and headers) and must stay far below Lambda's 6 MB response limit (item 11).
 */
const MAX_PROBLEM_BYTES = 256 * 1024;
/** Every answer to a request with an Idempotency-Key is stored for replays in that item too, the 202 of a batch included. */
const MAX_STORED_ANSWER_BYTES = 256 * 1024;
/** The development token endpoint answers in RFC 6749 section 5.2's JSON, not with problems. */
const OAUTH_TOKEN_PATH = '/oauth/token';

let koerier: TestHost;
let port: number;
let restoreLogger: (() => void) | undefined;
/** Handler log lines at warn and above (function errors name their request id). */
const handlerErrors: string[] = [];

function envInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, not ${text}`);
  return value;
}

beforeAll(async () => {
  koerier = await startTestHost(
    {
      // The fuzzer is no publisher flooding the ingest: 429s would hide what the requests reach.
      [settingEnv.publishRatePerMinute]: '1000000',
      // Nor a manager flooding the subscription routes: past 600 a minute every one would be a 429.
      [settingEnv.manageRatePerMinute]: '1000000',
      // Subscriptions without a handshake, so creating one calls nobody.
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.logLevel]: 'warn',
    },
    // No router or delivery: accepted events stay in the inbound queue, nothing is sent out.
    { queueTriggers: false },
  );
  port = koerier.host.port;
  restoreLogger = logger.captureTo((line) => handlerErrors.push(line), 'warn');
});

afterAll(async () => {
  restoreLogger?.();
  await koerier?.stop();
});

async function fuzzContext(): Promise<FuzzContext> {
  const manager = await koerier.host.issueToken('dev-subscriber', ['subscriptions:manage']);
  // Subscriptions to aim PATCH, DELETE and the delivery routes at. Validation is agreed, so no
  // sink is ever called; whatever a deployment asks of a sink's port or credential, one of these
  // shapes satisfies it.
  const sinks = ['https://127.0.0.1/fuzz-sink', `http://127.0.0.1:${port}/fuzz-sink`];
  const credentials: unknown[] = [
    {
      credentialtype: 'CLIENTCREDENTIALS',
      tokenurl: 'https://127.0.0.1/oauth/token',
      clientid: 'fuzz',
      clientsecret: 'fuzz-secret',
    },
    { credentialtype: 'ACCESSTOKEN', accesstoken: 'fuzz-sink-token' },
  ];
  const subscriptionIds: string[] = [];
  let sink = sinks[0]!;
  let sinkCredential: unknown;
  let refusal = '';
  for (const candidateSink of sinks) {
    for (const credential of credentials) {
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${koerier.url}/subscriptions`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${manager}`,
            'idempotency-key': crypto.randomUUID(),
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            sink: candidateSink,
            types: ['nl.example.fuzz.v1'],
            validation: 'agreed',
            sinkcredential: credential,
          }),
        });
        const text = await response.text();
        const id = response.status === 201 ? (JSON.parse(text) as { id?: string }).id : undefined;
        if (!id) {
          refusal = `${response.status} ${text.slice(0, 300)}`;
          break;
        }
        subscriptionIds.push(id);
        [sink, sinkCredential] = [candidateSink, credential];
      }
      if (subscriptionIds.length > 0) break;
    }
    if (subscriptionIds.length > 0) break;
  }
  // Without them the fuzzer would only ever meet 404s on those routes.
  if (subscriptionIds.length === 0)
    throw new Error(`no subscription to fuzz could be created; the last answer: ${refusal}`);
  const listCursors: string[] = [];
  const list = await fetch(`${koerier.url}/subscriptions?limit=1`, { headers: { authorization: `Bearer ${manager}` } });
  const next = ((await list.json()) as { next?: string; links?: { next?: string } }) ?? {};
  const nextLink = next.next ?? next.links?.next;
  const cursor = nextLink ? new URL(nextLink, koerier.url).searchParams.get('cursor') : null;
  if (cursor) listCursors.push(cursor);
  return {
    tokens: {
      publisher: await koerier.token('dev-publisher', ['events:publish']),
      manager,
      admin: await koerier.host.issueToken('dev-subscriber', ['subscriptions:manage', 'admin']),
      wrongScope: await koerier.host.issueToken('dev-publisher', ['contracts:read']),
      stranger: await koerier.host.issueToken('fuzz-stranger'),
    },
    subscriptionIds,
    listCursors,
    managerClientId: 'dev-subscriber',
    sink,
    sinkCredential,
  };
}

/** Host, Content-Length and Connection first: a host that drops late header lines must not lose the framing. */
function wireBytes(request: FuzzRequest): Buffer {
  const framing: [string, string][] = [['Host', `127.0.0.1:${port}`]];
  if (request.body.length > 0 || !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(request.method))
    framing.push(['Content-Length', String(request.body.length)]);
  framing.push(['Connection', 'close']);
  return requestBytes(request.method, servedTarget(request.target), [...framing, ...request.headers], request.body);
}

/** The API's routes are served under its base path (`/v1`); the host's own routes and well-known resources at the root. */
function servedTarget(target: string): string {
  const local = /^\/(health|metrics|console|oauth)([/?]|$)/.test(target) || target.startsWith('/.well-known/');
  return target.startsWith('/') && !local ? `${API_BASE_PATH}${target}` : target;
}

interface Failure {
  readonly kind: string;
  readonly index: number;
  readonly request: FuzzRequest;
  readonly outcome: RawOutcome;
  readonly why: string;
}

/** What is wrong with an answer, or undefined when it is a proper one. */
function judge(request: FuzzRequest, outcome: RawOutcome): { kind: string; why: string } | undefined {
  if (outcome.kind !== 'response') return { kind: `connection ${outcome.kind}`, why: outcome.detail };
  const { status } = outcome;
  if (status === 503 && isHealthReport(request, outcome)) return undefined;
  if (status >= 500) return { kind: `${status}`, why: `a ${status} answer` };
  if (status >= 400) {
    const problem = problemFault(request, outcome);
    if (problem) return { kind: `${status} not a problem`, why: problem };
  }
  if (request.mustRefuse && status < 400)
    return { kind: `${status} accepted`, why: `answered ${status}, but it must be refused: ${request.mustRefuse}` };
  if (status < 400 && hasIdempotencyKey(request) && outcome.bodyBytes > MAX_STORED_ANSWER_BYTES) {
    return {
      kind: `${status} too large to store`,
      why: `the answer is ${outcome.bodyBytes} bytes; the idempotency store keeps at most ${MAX_STORED_ANSWER_BYTES}`,
    };
  }
  return undefined;
}

function hasIdempotencyKey(request: FuzzRequest): boolean {
  return (
    request.method !== 'GET' &&
    request.method !== 'HEAD' &&
    request.headers.some(([name]) => name.toLowerCase() === 'idempotency-key')
  );
}

/**
 * GET /health answers 503 when an emulator did not answer its probe within the probe's timeout
 * (local/health.ts): that is its job, not a failure, and it happens while the fuzzer's
 * multi-megabyte requests keep the one process busy. After the run it must answer 200.
 */
function isHealthReport(request: FuzzRequest, response: RawResponse): boolean {
  if (request.target.split('?')[0] !== '/health' || (request.method !== 'GET' && request.method !== 'HEAD'))
    return false;
  if (request.method === 'HEAD') return true;
  try {
    const report = JSON.parse(response.body.toString('utf8')) as { status?: unknown; parts?: unknown };
    return report.status === 'unavailable' && typeof report.parts === 'object' && report.parts !== null;
  } catch {
    return false;
  }
}

function problemFault(request: FuzzRequest, response: RawResponse): string | undefined {
  const contentType = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const oauth = request.method === 'POST' && request.target.split('?')[0] === OAUTH_TOKEN_PATH;
  const wanted = oauth ? 'application/json' : 'application/problem+json';
  if (contentType !== wanted) {
    // Every answer of the API Gateway emulation carries its request id; Node's own do not.
    const who = response.headers['apigw-requestid']
      ? ''
      : " (answered by Node's HTTP server before the host saw the request)";
    return `Content-Type is ${JSON.stringify(response.headers['content-type'] ?? null)}, not ${wanted}${who}`;
  }
  if (request.method === 'HEAD') return undefined;
  if (response.bodyBytes > MAX_PROBLEM_BYTES)
    return `the answer is ${response.bodyBytes} bytes, more than ${MAX_PROBLEM_BYTES}`;
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return `the body is not JSON: ${JSON.stringify(response.body.subarray(0, 120).toString('utf8'))}`;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body is not a JSON object';
  const fields = body as Record<string, unknown>;
  if (oauth) return typeof fields['error'] === 'string' ? undefined : 'an OAuth error answer without "error"';
  if (typeof fields['type'] !== 'string' || fields['type'] === '') return 'the problem has no "type"';
  if (typeof fields['title'] !== 'string' || fields['title'] === '') return 'the problem has no "title"';
  if (fields['status'] !== response.status)
    return `the problem's "status" is ${JSON.stringify(fields['status'])}, the answer's ${response.status}`;
  return undefined;
}

/** A request for a human: values escaped and cut, sizes given. */
function describeRequest(request: FuzzRequest): string {
  const show = (value: string | Buffer, max: number) => {
    const text = typeof value === 'string' ? value : value.toString('latin1');
    const escaped = JSON.stringify(text.length > max ? text.slice(0, max) : text);
    return text.length > max ? `${escaped}… (${Buffer.byteLength(value)} bytes)` : escaped;
  };
  const target =
    request.target.length > 200
      ? `${request.target.slice(0, 200)}… (${request.target.length} characters)`
      : request.target;
  const lines = [`${request.method} ${target}`];
  const shownHeaders =
    request.headers.length > 30
      ? [
          ...request.headers.slice(0, 20),
          ['…', `${request.headers.length - 25} more header lines`] as [string, string],
          ...request.headers.slice(-5),
        ]
      : request.headers;
  for (const [name, value] of shownHeaders)
    lines.push(
      `  ${name}: ${name.toLowerCase() === 'authorization' ? show(String(value).slice(0, 30), 30) : show(value, 160)}`,
    );
  if (request.body.length > 0) lines.push(`  body: ${show(request.body, 300)}`);
  return lines.join('\n');
}

function describeOutcome(outcome: RawOutcome): string {
  if (outcome.kind !== 'response') return `${outcome.kind}: ${outcome.detail}`;
  const body = outcome.body.subarray(0, 400).toString('utf8');
  return `${outcome.status} ${outcome.headers['content-type'] ?? '(no content-type)'} (${outcome.bodyBytes} bytes) ${JSON.stringify(body)}${outcome.bodyBytes > 400 ? '…' : ''}`;
}

/** The error a handler or the host logged for the request with this API Gateway request id. */
function serverErrorFor(outcome: RawOutcome): string | undefined {
  if (outcome.kind !== 'response') return undefined;
  const requestId = outcome.headers['apigw-requestid'];
  if (!requestId) return undefined;
  for (const line of [...handlerErrors, ...koerier.logs]) {
    if (!line.includes(requestId)) continue;
    const entry = JSON.parse(line) as {
      level?: string;
      message?: string;
      error?: { name?: string; message?: string; stack?: string } | string;
    };
    if (entry.level !== 'error' || entry.message === 'request') continue;
    // Koerier's own frames say which code answered; the SDK's frames say little.
    const frames = (typeof entry.error === 'string' ? '' : (entry.error?.stack ?? ''))
      .split('\n')
      .filter((frame) => /\/(functions|local)\//.test(frame))
      .slice(0, 4)
      .map((frame) => frame.trim().replace(/\(.*?\/((functions|local)\/)/, '($1'));
    const error =
      typeof entry.error === 'string'
        ? entry.error
        : `${entry.error?.name ?? ''}: ${entry.error?.message ?? ''} ${frames.join(' | ')}`;
    return `${entry.message}: ${error}`.slice(0, 600);
  }
  return undefined;
}

describe('review #11/#12: the laptop host against seeded malformed requests', () => {
  it(
    `review #11/#12: a few thousand seeded malformed requests across every route get no 5xx, no dropped connection, every 4xx a bounded problem+json, and none that breaks an enforced rule is accepted`,
    { timeout: Math.max(240_000, COUNT * 100) },
    async () => {
      const context = await fuzzContext();
      const generator = new MalformedRequests(SEED, context);
      console.log(
        `fuzz: seed ${SEED} (FUZZ_SEED), ${COUNT} requests (FUZZ_COUNT), ${CONCURRENCY} at a time, ${context.subscriptionIds.length} subscriptions to aim at`,
      );

      const failures: Failure[] = [];
      const statuses = new Map<number, number>();
      const timeByMutation = new Map<string, number>();
      let nextIndex = 0;
      let sent = 0;
      const mutationsSent = new Set<string>();
      const started = Date.now();
      const cpuBefore = process.cpuUsage();
      const worker = async () => {
        for (;;) {
          const index = nextIndex++;
          if (index >= COUNT) return;
          // Drawn in index order whatever the timing: the generator is called synchronously here.
          const request = generator.next();
          if (ONLY.size > 0 && !ONLY.has(index)) continue;
          const requestStarted = Date.now();
          const outcome = await sendRaw(port, wireBytes(request), {
            head: request.method === 'HEAD',
            timeoutMs: 60_000,
          });
          timeByMutation.set(
            request.mutation,
            (timeByMutation.get(request.mutation) ?? 0) + Date.now() - requestStarted,
          );
          sent++;
          mutationsSent.add(request.mutation);
          if (outcome.kind === 'response') statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
          const verdict = judge(request, outcome);
          if (verdict) failures.push({ ...verdict, index, request, outcome });
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const seconds = (Date.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      console.log(
        `fuzz: ${sent} requests in ${seconds.toFixed(1)} s (host and fuzzer together used ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s of CPU); answers by status: ${[
          ...statuses,
        ]
          .sort(([a], [b]) => a - b)
          .map(([status, n]) => `${status}×${n}`)
          .join(' ')}`,
      );
      console.log(
        `fuzz: most time spent on ${[...timeByMutation]
          .sort(([, a], [, b]) => b - a)
          .slice(0, 8)
          .map(([mutation, ms]) => `${mutation} ${(ms / 1000).toFixed(1)} s`)
          .join(', ')}`,
      );

      // One entry per kind of failure, mutation and cause (the server's error, or what is wrong with
      // the answer), with its smallest request as the reproduction.
      const groups = new Map<string, { count: number; smallest: Failure; size: number }>();
      for (const failure of failures) {
        // A 5xx by the error the server logged; a wrong answer by what is wrong with it.
        const serverError = serverErrorFor(failure.outcome)?.replace(/ at .*/, '');
        const cause = serverError ?? (failure.kind.endsWith('accepted') ? '' : failure.why.replace(/\d+/g, 'N'));
        const key = `${failure.kind} | ${failure.request.mutation}${cause ? ` | ${cause.slice(0, 160)}` : ''}`;
        const size = wireBytes(failure.request).length;
        const group = groups.get(key);
        if (!group) groups.set(key, { count: 1, smallest: failure, size });
        else {
          group.count++;
          if (size < group.size) Object.assign(group, { smallest: failure, size });
        }
      }
      const report = [...groups]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, { count, smallest }]) => ({
          failure: `${smallest.kind} | ${smallest.request.mutation}`,
          group: key,
          count,
          replay: `FUZZ_SEED=${SEED} FUZZ_COUNT=${smallest.index + 1} FUZZ_ONLY=${smallest.index}`,
          digest: requestDigest(smallest.request),
          why: smallest.why,
          request: describeRequest(smallest.request),
          answer: describeOutcome(smallest.outcome),
          serverError: serverErrorFor(smallest.outcome),
        }));
      for (const entry of report) {
        console.log(
          `\nFAILURE ${entry.failure} (${entry.count}×): ${entry.serverError ?? entry.why}\n  replay: ${entry.replay}\n${entry.request}\n  → ${entry.answer}`,
        );
      }
      if (process.env['FUZZ_REPORT'])
        await writeFile(
          process.env['FUZZ_REPORT'],
          JSON.stringify(
            { seed: SEED, count: COUNT, seconds, statuses: Object.fromEntries(statuses), failures: report },
            null,
            2,
          ),
        );

      expect(
        report.map(
          (entry) =>
            `${entry.failure} (${entry.count}×, e.g. ${entry.replay}): ${(entry.serverError ?? entry.why).slice(0, 240)}`,
        ),
      ).toEqual([]);
      // Every kind of breakage was sent (the first pass covers each mutator once).
      if (ONLY.size === 0 && COUNT >= MalformedRequests.mutationNames().length)
        expect([...mutationsSent].sort()).toEqual(MalformedRequests.mutationNames().sort());

      // Still serving, and healthy once the last request is done (a probe may time out while a
      // multi-megabyte request is still being parsed, so a few tries).
      let health = 0;
      await eventually(
        () => `GET /health to answer 200 (last: ${health})`,
        async () => (health = (await fetch(`${koerier.origin}/health`)).status) === 200,
        { timeoutMs: 4_000, intervalMs: 1_000 },
      );
    },
  );

  /** Requests a client library would never send: Node's HTTP parser, not a handler, meets them. */
  const rawCases: {
    name: string;
    bytes: (port: number) => Buffer;
    expect: 'problem-4xx' | 'problem-4xx-or-close' | 'answer' | 'nothing';
    afterWrite?: 'end' | 'destroy' | 'keep-open';
  }[] = [
    {
      name: 'bare LF line endings',
      bytes: (p) => Buffer.from(`GET /health HTTP/1.1\nHost: 127.0.0.1:${p}\nConnection: close\n\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'a bare LF inside the header block',
      bytes: (p) => Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\nX-Fuzz: y\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'a bare CR inside a header value',
      bytes: (p) =>
        Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nX-Fuzz: a\rb\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'Content-Length and Transfer-Encoding together',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`,
        ),
      expect: 'problem-4xx',
    },
    {
      name: 'two different Content-Lengths',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}x`,
        ),
      expect: 'problem-4xx',
    },
    {
      name: 'a Content-Length that is not a number',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Length: abc\r\nConnection: close\r\n\r\n`,
        ),
      expect: 'problem-4xx',
    },
    {
      name: 'a negative Content-Length',
      bytes: (p) =>
        Buffer.from(`POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Length: -1\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'a chunk size that is not hexadecimal',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/cloudevents+json\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        ),
      expect: 'problem-4xx-or-close',
    },
    {
      name: 'Transfer-Encoding other than chunked',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\nxyz`,
        ),
      expect: 'problem-4xx-or-close',
    },
    {
      name: 'an obsolete folded header line',
      bytes: (p) =>
        Buffer.from(
          `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nX-Fuzz: a\r\n  folded\r\nConnection: close\r\n\r\n`,
        ),
      expect: 'problem-4xx',
    },
    {
      name: 'a space before the colon',
      bytes: (p) => Buffer.from(`GET /health HTTP/1.1\r\nHost : 127.0.0.1:${p}\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'a header line without a colon',
      bytes: (p) =>
        Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nno colon here\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'a NUL in the request target',
      bytes: (p) => Buffer.from(`GET /he\u0000alth HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'HTTP/1.1 without Host',
      bytes: () => Buffer.from('GET /health HTTP/1.1\r\nConnection: close\r\n\r\n'),
      expect: 'problem-4xx',
    },
    {
      name: 'an unsupported HTTP version',
      bytes: (p) => Buffer.from(`GET /health HTTP/3.0\r\nHost: 127.0.0.1:${p}\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx-or-close',
    },
    {
      name: 'the HTTP/2 connection preface',
      bytes: () => Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
      expect: 'problem-4xx-or-close',
    },
    { name: 'not HTTP at all', bytes: () => Buffer.from('hello there\r\n\r\n'), expect: 'problem-4xx-or-close' },
    {
      name: 'an unknown method',
      bytes: (p) => Buffer.from(`FROB /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'a lower-case method',
      bytes: (p) => Buffer.from(`get /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'CONNECT',
      bytes: (p) => Buffer.from(`CONNECT 127.0.0.1:${p} HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'an Upgrade to websocket',
      bytes: (p) =>
        Buffer.from(
          `GET /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
        ),
      expect: 'answer',
    },
    {
      name: 'a request line longer than the header limit',
      bytes: (p) =>
        Buffer.from(`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'header lines longer than the header limit',
      bytes: (p) =>
        Buffer.from(
          `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nX-Fuzz: ${'v'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
        ),
      expect: 'problem-4xx',
    },
    {
      name: 'an Expect the host cannot meet',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nExpect: teapot\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        ),
      expect: 'problem-4xx',
    },
    { name: 'HTTP/1.0 without Host', bytes: () => Buffer.from('GET /health HTTP/1.0\r\n\r\n'), expect: 'answer' },
    {
      name: 'a well-formed chunked body',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/cloudevents+json\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        ),
      expect: 'answer',
    },
    {
      name: 'a body shorter than its Content-Length, then the client half-closes',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 100\r\n\r\n{"specversion":`,
        ),
      expect: 'problem-4xx-or-close',
      afterWrite: 'end',
    },
    {
      name: 'headers that never end, then the client half-closes',
      bytes: (p) => Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nX-Fuzz: y\r\n`),
      expect: 'problem-4xx-or-close',
      afterWrite: 'end',
    },
    {
      name: 'a complete request, then the client half-closes',
      bytes: (p) => Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\n\r\n`),
      expect: 'answer',
      afterWrite: 'end',
    },
    {
      name: 'a complete POST without a token, then the client half-closes',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 2\r\n\r\n{}`,
        ),
      expect: 'problem-4xx',
      afterWrite: 'end',
    },
    {
      name: 'two Host header lines',
      bytes: (p) =>
        Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nHost: 127.0.0.2\r\nConnection: close\r\n\r\n`),
      expect: 'problem-4xx',
    },
    {
      name: 'a client that aborts mid-body',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 100\r\n\r\n{"specversion":`,
        ),
      expect: 'nothing',
      afterWrite: 'destroy',
    },
    {
      name: 'a client that aborts mid-way through a large upload',
      bytes: (p) =>
        Buffer.concat([
          Buffer.from(
            `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 5000000\r\n\r\n`,
          ),
          Buffer.alloc(1_000_000, 0x20),
        ]),
      expect: 'nothing',
      afterWrite: 'destroy',
    },
    {
      name: 'a client that aborts before the last chunk',
      bytes: (p) =>
        Buffer.from(
          `POST /subscriptions HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n5\r\n{"sin\r\n`,
        ),
      expect: 'nothing',
      afterWrite: 'destroy',
    },
    {
      name: 'a client that aborts after Expect: 100-continue',
      bytes: (p) =>
        Buffer.from(
          `POST /events HTTP/1.1\r\nHost: 127.0.0.1:${p}\r\nExpect: 100-continue\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 50\r\n\r\n`,
        ),
      expect: 'nothing',
      afterWrite: 'destroy',
    },
  ];

  it(
    'review #12: requests broken at the HTTP level get a problem+json 4xx or a close as HTTP allows, never a 5xx in the answer or the log, and the host keeps serving',
    { timeout: 120_000 },
    async () => {
      const faults: string[] = [];
      for (const rawCase of rawCases) {
        const logsBefore = koerier.logs.length;
        const errorsBefore = handlerErrors.length;
        const outcome = await sendRaw(port, rawCase.bytes(port), {
          afterWrite: rawCase.afterWrite ?? 'keep-open',
          timeoutMs: 15_000,
        });
        const errorsLogged = () =>
          [...koerier.logs.slice(logsBefore), ...handlerErrors.slice(errorsBefore)]
            .map((line) => JSON.parse(line) as { level?: string; status?: number; message?: string; error?: unknown })
            .filter((entry) => entry.level === 'error' || (entry.status ?? 0) >= 500);
        // An abandoned request finishes in the host after the client is gone: it has a moment to
        // log. An error logged ends the wait at once; it is reported below with the other faults.
        await staysQuiet(
          'error or 5xx in the log',
          () => errorsLogged().length > 0,
          rawCase.expect === 'nothing' ? 300 : 50,
        ).catch(() => undefined);
        const fault = rawFault(rawCase.expect, outcome);
        if (fault) faults.push(`${rawCase.name}: ${fault} (answer: ${describeOutcome(outcome)})`);
        const logged = errorsLogged();
        if (logged.length > 0)
          faults.push(
            `${rawCase.name}: the host logged ${logged.map((entry) => `${entry.message} ${entry.status ?? ''} ${JSON.stringify(entry.error ?? '')}`.slice(0, 200)).join('; ')}`,
          );
        const health = await sendRaw(
          port,
          Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`),
        );
        if (health.kind !== 'response' || health.status !== 200)
          faults.push(`${rawCase.name}: GET /health afterwards got ${describeOutcome(health)}`);
      }
      expect(faults).toEqual([]);
    },
  );
});

function rawFault(
  expectation: 'problem-4xx' | 'problem-4xx-or-close' | 'answer' | 'nothing',
  outcome: RawOutcome,
): string | undefined {
  if (expectation === 'nothing') return undefined;
  if (outcome.kind !== 'response') {
    if (expectation === 'problem-4xx-or-close' && (outcome.kind === 'closed' || outcome.kind === 'error'))
      return undefined;
    return `no answer (${outcome.kind}: ${outcome.detail})`;
  }
  if (outcome.status >= 500) return `a ${outcome.status}`;
  if (expectation !== 'answer' && outcome.status < 400) return `a ${outcome.status}, not a 4xx`;
  if (outcome.status >= 400)
    return problemFault({ mutation: 'raw', method: 'GET', target: '/', headers: [], body: Buffer.alloc(0) }, outcome);
  return undefined;
}
