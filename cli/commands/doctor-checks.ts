/**
 * The checks `koerier doctor` runs against a live gateway, in order, each timed and reported as
 * one step: the API description, `/health` (the laptop host serves it; an AWS stack has none), a
 * token per client, a call without a token (401), a temporary pull subscription, four publications
 * (structured, a batch of ten, binary, 1 MiB by claim check), a repeat with the same
 * Idempotency-Key, a broken event (400), receiving everything back through the pull API and
 * comparing it with what was sent, fetching the claim-checked data, acknowledging, and deleting
 * what the run made. A step that cannot run because an earlier one failed is skipped, with why.
 *
 * Every run publishes under its own source (`<base>:<run>` under a URN, `<base>/<run>` otherwise)
 * and subscribes to exactly that source, so runs side by side never see each other's events.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  toBatchMessage,
  toBinaryMessage,
  toStructuredMessage,
} from '../../functions/core/cloudevents/http-binding/to-message.js';
import { digestOf } from '../../functions/core/claim-check/payload-reference.js';
import { KoerierClient, problemOf, type ApiAnswer, type RequestOptions, type TokenSource } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import {
  gotOf,
  meaningOfAnswer,
  meaningOfTokenFailure,
  meaningOfUnreachable,
  neededScope,
  problemSlug,
  type Party,
  type Situation,
  type StepKind,
} from './doctor-meanings.js';

export const DOCTOR_TYPE = 'nl.koerier.doctor.check';
export const DOCTOR_SOURCE = 'urn:nld:koerier:doctor';
/** The claim-checked event's data: 1 MiB of JSON, well above the 64 KiB inline limit. */
export const LARGE_DATA_BYTES = 1_048_576;
const BATCH_SIZE = 10;

export type StepResult = 'ok' | 'failed' | 'skipped';

export interface StepReport {
  readonly step: string;
  readonly result: StepResult;
  /** Milliseconds the step took; null for a step that did not run. */
  readonly latencyMs: number | null;
  readonly detail: string;
  /** For a failed step: what it got instead of what it expected. */
  readonly got?: string;
  /** For a failed step: what that usually means. */
  readonly meaning?: string;
}

export interface DoctorClient {
  readonly clientId: string;
  readonly tokens: TokenSource;
  /** The API client with this client's tokens. */
  readonly api: KoerierClient;
}

export interface DoctorPlan {
  readonly gatewayUrl: string;
  readonly publisher: DoctorClient;
  /** The same object as `publisher` when one client does both. */
  readonly consumer: DoctorClient;
  /** The API client without a token: the API description, /health, the 401, a presigned URL. */
  readonly anonymous: KoerierClient;
  readonly type: string;
  /** The publish grant prefix the run's source goes under. */
  readonly sourceBase: string;
  /** How long to wait for the published events to come back through the pull API. */
  readonly receiveTimeoutMs: number;
  /** Aborted on Ctrl-C: the steps left are skipped, the clean-up still runs. */
  readonly signal: AbortSignal;
  /** Told of every step as it ends (progress lines). */
  readonly onStep?: (report: StepReport) => void;
}

export interface DoctorOutcome {
  readonly run: string;
  readonly source: string;
  readonly steps: readonly StepReport[];
  readonly interrupted: boolean;
}

/** A step that did not get what it expected: `got` is what it got, `meaning` what that usually means. */
class StepFailed extends Error {
  constructor(
    readonly got: string,
    readonly meaning: string,
  ) {
    super(got);
  }
}

/** A step with nothing to do here (not a failure). */
class Skipped {
  constructor(readonly detail: string) {}
}

interface Sent {
  readonly label: string;
  readonly event: Record<string, unknown>;
  /** For the claim-checked event: the data's bytes as Koerier stores them. */
  readonly data?: Buffer;
}

interface Lock {
  readonly locktoken: string;
}

/** A run's source under the grant: a URN continues with `:`, anything else with `/` (publish grants end on those boundaries). */
export function runSource(base: string, run: string): string {
  const separator = base.toLowerCase().startsWith('urn:') ? ':' : '/';
  return base.endsWith(separator) ? `${base}${run}` : `${base}${separator}${run}`;
}

export async function runDoctor(plan: DoctorPlan): Promise<DoctorOutcome> {
  const run = `${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomUUID().slice(0, 8)}`;
  const source = runSource(plan.sourceBase, run);
  const doctor = new Doctor(plan, run, source);
  await doctor.all();
  return { run, source, steps: doctor.steps, interrupted: plan.signal.aborted };
}

class Doctor {
  readonly steps: StepReport[] = [];
  private readonly publisher: Party;
  private readonly consumer: Party;
  private tokensOk = { publisher: false, consumer: false };
  private subscriptionId: string | undefined;
  /** Accepted publications, by event id. */
  private readonly sent = new Map<string, Sent>();
  private readonly received = new Map<string, Record<string, unknown>>();
  private readonly locks: Lock[] = [];
  private duplicates = 0;
  private firstPublish:
    { key: string; message: { body: Buffer; headers: Record<string, string> }; answer: ApiAnswer } | undefined;

  constructor(
    private readonly plan: DoctorPlan,
    private readonly run: string,
    private readonly source: string,
  ) {
    this.publisher = { clientId: plan.publisher.clientId, role: 'publisher' };
    this.consumer = { clientId: plan.consumer.clientId, role: 'consumer' };
  }

  private get separate(): boolean {
    return this.plan.consumer !== this.plan.publisher;
  }

  async all(): Promise<void> {
    try {
      await this.step('API description', 'description', () => this.description());
      await this.step('/health', 'health', () => this.health());
      await this.step(`token for ${this.publisher.clientId}`, 'token', () => this.token('publisher'), this.publisher);
      if (this.separate)
        await this.step(`token for ${this.consumer.clientId}`, 'token', () => this.token('consumer'), this.consumer);
      await this.step('no token → 401', 'unauthenticated', () => this.unauthenticated());
      await this.step('pull subscription', 'subscribe', () => this.subscribe(), this.consumer);
      await this.step('publish 1 event (structured)', 'publish', () => this.publishStructured(), this.publisher);
      await this.step(`publish a batch of ${BATCH_SIZE}`, 'publish', () => this.publishBatch(), this.publisher);
      await this.step('publish 1 event (binary)', 'publish', () => this.publishBinary(), this.publisher);
      await this.step('publish 1 MiB (claim check)', 'publish-large', () => this.publishLarge(), this.publisher);
      await this.step('same Idempotency-Key again', 'idempotency', () => this.repeat(), this.publisher);
      await this.step('broken event → 400', 'broken-event', () => this.broken(), this.publisher);
      await this.step('receive (pull)', 'receive', () => this.receive(), this.consumer);
      await this.step('arrived as sent', 'receive', () => this.compare());
      await this.step('claim check data', 'payload', () => this.payload(), this.consumer);
      await this.step('acknowledge', 'acknowledge', () => this.acknowledge(), this.consumer);
    } finally {
      // Also after Ctrl-C, and after a failure of the doctor itself.
      await this.step('clean up', 'cleanup', () => this.cleanUp(), this.consumer, { evenWhenInterrupted: true });
    }
  }

  private async step(
    name: string,
    kind: StepKind,
    body: () => Promise<string | Skipped>,
    party?: Party,
    { evenWhenInterrupted = false } = {},
  ): Promise<void> {
    if (this.plan.signal.aborted && !evenWhenInterrupted) {
      this.record({ step: name, result: 'skipped', latencyMs: null, detail: 'interrupted (Ctrl-C)' });
      return;
    }
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const outcome = await body();
      if (outcome instanceof Skipped)
        this.record({ step: name, result: 'skipped', latencyMs: null, detail: outcome.detail });
      else this.record({ step: name, result: 'ok', latencyMs: latency(), detail: outcome });
    } catch (error) {
      if (this.plan.signal.aborted && !evenWhenInterrupted) {
        this.record({ step: name, result: 'skipped', latencyMs: latency(), detail: 'interrupted (Ctrl-C)' });
        return;
      }
      const situation: Situation = { kind, ...(party ? { party } : {}), source: this.source, type: this.plan.type };
      const { got, meaning } = explain(error, situation);
      this.record({ step: name, result: 'failed', latencyMs: latency(), detail: got, got, meaning });
    }
  }

  private record(report: StepReport): void {
    this.steps.push(report);
    this.plan.onStep?.(report);
  }

  private options(extra: RequestOptions = {}): RequestOptions {
    return { signal: this.plan.signal, ...extra };
  }

  // --- the gateway itself -------------------------------------------------------------------

  private async description(): Promise<string> {
    const answer = await this.plan.anonymous.request('GET', '/openapi.json', this.options());
    const document = answer.json as
      | {
          openapi?: string;
          info?: { version?: string };
          paths?: Record<string, unknown>;
          components?: { securitySchemes?: Record<string, unknown> };
        }
      | undefined;
    if (answer.status !== 200 || typeof document?.openapi !== 'string') {
      throw new StepFailed(
        gotOf(answer),
        meaningOfAnswer(answer.status === 200 ? { ...answer, status: 404 } : answer, { kind: 'description' }),
      );
    }
    const tokenUrl = Object.values(document.components?.securitySchemes ?? {})
      .map(
        (scheme) =>
          (scheme as { flows?: { clientCredentials?: { tokenUrl?: string } } }).flows?.clientCredentials?.tokenUrl,
      )
      .find(Boolean);
    const paths = Object.keys(document.paths ?? {}).length;
    return `OpenAPI ${document.openapi}, API ${document.info?.version ?? '?'}, ${paths} paths; token URL ${tokenUrl ?? '(none named)'}`;
  }

  private async health(): Promise<string | Skipped> {
    const url = new URL('/health', this.plan.gatewayUrl).toString();
    // A health probe answers now or counts as down: no retries.
    const answer = await new KoerierClient(this.plan.gatewayUrl, undefined, 0).request('GET', url, this.options());
    if (answer.status === 404) {
      return new Skipped(
        'not served here: an AWS stack has no /health (the laptop host serves it); the API description answering is the liveness check',
      );
    }
    const body = answer.json as { status?: string; parts?: Record<string, string> } | undefined;
    const parts = body?.parts ? Object.entries(body.parts).map(([part, state]) => `${part} ${state}`) : [];
    if (answer.status !== 200) {
      const down = parts.filter((part) => !part.endsWith(' ok'));
      throw new StepFailed(
        `${answer.status} ${body?.status ?? answer.text.slice(0, 120)}${parts.length ? ` (${parts.join(', ')})` : ''}`,
        down.length
          ? `the host cannot reach ${down.map((part) => part.split(' ')[0]).join(', ')}: on the laptop the in-process emulator stopped; restart npm start.`
          : meaningOfAnswer(answer, { kind: 'health' }),
      );
    }
    return `${body?.status ?? answer.status}${parts.length ? ` (${parts.join(', ')})` : ''}`;
  }

  private async token(role: 'publisher' | 'consumer'): Promise<string> {
    const client = role === 'publisher' ? this.plan.publisher : this.plan.consumer;
    // A new token, not the cached one: the point is that the identity provider issues one now.
    const token = await client.tokens.token(true);
    this.tokensOk[role] = true;
    if (!this.separate) this.tokensOk.consumer = true;
    const scopes = scopesOf(token);
    const needs = this.separate
      ? role === 'publisher'
        ? ['events:publish']
        : ['subscriptions:manage', 'events:consume']
      : ['events:publish', 'subscriptions:manage', 'events:consume'];
    if (scopes === undefined) return `issued (not a JWT this CLI can read; scopes unknown)`;
    const missing = needs.filter((scope) => !scopes.includes(scope));
    const listed = `scopes: ${scopes.join(' ') || '(none)'}`;
    return missing.length ? `issued; ${listed}; without ${missing.join(', ')} a later step fails` : `issued; ${listed}`;
  }

  private async unauthenticated(): Promise<string> {
    const probes: [string, string, RequestOptions][] = [
      [
        'POST',
        '/events',
        { raw: toStructuredMessage(JSON.stringify(this.event('unauthenticated', 0))), idempotencyKey: randomUUID() },
      ],
      ['GET', '/subscriptions', {}],
    ];
    const seen: string[] = [];
    for (const [method, path, options] of probes) {
      const answer = await this.plan.anonymous.request(method, path, this.options(options));
      const challenge = answer.headers.get('www-authenticate') ?? '';
      if (answer.status !== 401 || !/^Bearer\b/i.test(challenge)) {
        throw new StepFailed(
          `${method} ${path} without a token: ${gotOf(answer)}`,
          answer.status < 300
            ? 'the route accepts calls without a token: this must never be; do not put the stack into service (check the function and the API Gateway route).'
            : answer.status === 401
              ? 'a 401 without a Bearer challenge (RFC 6750): something in front of Koerier answered.'
              : meaningOfAnswer(answer, { kind: 'unauthenticated' }),
        );
      }
      seen.push(`${method} ${path} 401`);
    }
    return `${seen.join(', ')}, with a Bearer challenge`;
  }

  // --- subscribe and publish -----------------------------------------------------------------

  private async subscribe(): Promise<string | Skipped> {
    if (!this.tokensOk.consumer) return new Skipped(`needs a token for ${this.consumer.clientId}`);
    const answer = await this.plan.consumer.api.request(
      'POST',
      '/subscriptions',
      // Not aborted by Ctrl-C: the answer names the subscription the clean-up deletes.
      {
        body: {
          delivery: 'pull',
          types: [this.plan.type],
          source: this.source,
          maxdeliverycount: 5,
          retentionseconds: 3600,
        },
        idempotencyKey: randomUUID(),
      },
    );
    const created = answer.json as { id?: string; status?: string } | undefined;
    if (answer.status !== 201 || typeof created?.id !== 'string') {
      throw new StepFailed(gotOf(answer), meaningOfAnswer(answer, this.situation('subscribe', this.consumer)));
    }
    this.subscriptionId = created.id;
    if (created.status !== 'active') {
      throw new StepFailed(
        `created ${created.id}, status ${created.status ?? '?'}`,
        'a pull subscription is active at once; the problem is in the subscriptions function.',
      );
    }
    return `${created.id}: ${this.plan.type} from ${this.source}`;
  }

  private event(kind: string, n: number, data: unknown = { doctor: this.run, kind, n }): Record<string, unknown> {
    return {
      specversion: '1.0',
      id: randomUUID(),
      source: this.source,
      type: this.plan.type,
      subject: `doctor/${this.run}/${kind}/${n}`,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data,
    };
  }

  /** Publishes one message; answers the 202 body, or fails the step with what came back. */
  private async publish(
    message: { body: Buffer; headers: Record<string, string> },
    events: readonly Sent[],
    kind: StepKind = 'publish',
    key = randomUUID(),
  ): Promise<{ acceptedCount?: number; warnings?: unknown[]; answer: ApiAnswer }> {
    const answer = await this.plan.publisher.api.request(
      'POST',
      '/events',
      this.options({ raw: message, idempotencyKey: key }),
    );
    if (answer.status !== 202)
      throw new StepFailed(gotOf(answer), meaningOfAnswer(answer, this.situation(kind, this.publisher)));
    const body = (answer.json ?? {}) as { acceptedCount?: number; warnings?: unknown[] };
    if (body.acceptedCount !== events.length) {
      throw new StepFailed(
        `202 with acceptedCount ${String(body.acceptedCount)} for ${events.length}`,
        'the ingest accepted a different number of events than it was sent.',
      );
    }
    for (const sent of events) this.sent.set(sent.event['id'] as string, sent);
    return { ...body, answer };
  }

  private publishable(): Skipped | undefined {
    return this.tokensOk.publisher ? undefined : new Skipped(`needs a token for ${this.publisher.clientId}`);
  }

  private async publishStructured(): Promise<string | Skipped> {
    const skip = this.publishable();
    if (skip) return skip;
    const event = this.event('structured', 1);
    const message = toStructuredMessage(JSON.stringify(event));
    const key = randomUUID();
    const { answer, warnings } = await this.publish(
      message,
      [{ label: 'the structured event', event }],
      'publish',
      key,
    );
    this.firstPublish = { key, message, answer };
    return `202, 1 accepted${warningsText(warnings)}`;
  }

  private async publishBatch(): Promise<string | Skipped> {
    const skip = this.publishable();
    if (skip) return skip;
    const events = Array.from({ length: BATCH_SIZE }, (_, i) => this.event('batch', i + 1));
    const { warnings } = await this.publish(
      toBatchMessage(events.map((event) => JSON.stringify(event))),
      events.map((event, i) => ({ label: `batch event ${i + 1}`, event })),
    );
    return `202, ${BATCH_SIZE} accepted${warningsText(warnings)}`;
  }

  private async publishBinary(): Promise<string | Skipped> {
    const skip = this.publishable();
    if (skip) return skip;
    const event = this.event('binary', 1);
    const { warnings } = await this.publish(toBinaryMessage(JSON.stringify(event)), [
      { label: 'the binary-mode event', event },
    ]);
    return `202, 1 accepted${warningsText(warnings)}`;
  }

  private async publishLarge(): Promise<string | Skipped> {
    const skip = this.publishable();
    if (skip) return skip;
    // JSON data of exactly LARGE_DATA_BYTES: random base64url filler, so nothing in between can shrink it.
    const shell = JSON.stringify({ doctor: this.run, kind: 'claim-check', filler: '' });
    const filler = randomBytes(LARGE_DATA_BYTES)
      .toString('base64url')
      .slice(0, LARGE_DATA_BYTES - Buffer.byteLength(shell));
    const data = { doctor: this.run, kind: 'claim-check', filler };
    const bytes = Buffer.from(JSON.stringify(data), 'utf8');
    const event = this.event('claim-check', 1, data);
    const { warnings } = await this.publish(
      toStructuredMessage(JSON.stringify(event)),
      [{ label: 'the 1 MiB event', event, data: bytes }],
      'publish-large',
    );
    return `202, ${bytes.length.toLocaleString('en-US')} bytes of data accepted${warningsText(warnings)}`;
  }

  private async repeat(): Promise<string | Skipped> {
    const first = this.firstPublish;
    if (!first) return new Skipped('needs the structured publication');
    const started = Date.now();
    let waited = 0;
    for (;;) {
      const answer = await this.plan.publisher.api.request(
        'POST',
        '/events',
        this.options({ raw: first.message, idempotencyKey: first.key }),
      );
      // Another container may still hold the first attempt's lock (docs/DEPLOYING.md, koerier:idempotencyLockSeconds): wait as told.
      if (
        answer.status === 409 &&
        problemSlug(answer) === 'idempotency-key-in-progress' &&
        Date.now() - started < 120_000
      ) {
        const seconds = Math.min(Number(answer.headers.get('retry-after')) || 1, 30);
        waited += seconds;
        await sleep(seconds * 1000, this.plan.signal);
        continue;
      }
      const replayed = answer.headers.get('idempotent-replayed') === 'true';
      if (answer.status !== first.answer.status || !replayed || answer.text !== first.answer.text) {
        const got = `${gotOf(answer)}${replayed ? '' : ' (no Idempotent-Replayed: true)'}`;
        throw new StepFailed(
          answer.status === first.answer.status ? `${got}; the body differs from the first answer` : got,
          answer.status === 202 && !replayed
            ? 'the repeat was processed again instead of answered from the idempotency table: the ingest cannot read or write the idempotency table (its log group).'
            : meaningOfAnswer(answer, this.situation('idempotency', this.publisher)),
        );
      }
      return `${answer.status}, the stored answer, Idempotent-Replayed: true${waited ? ` (after ${waited} s of 409 in progress)` : ''}`;
    }
  }

  private async broken(): Promise<string | Skipped> {
    const skip = this.publishable();
    if (skip) return skip;
    const broken = { specversion: '0.3', id: '', source: this.source, type: this.plan.type };
    const answer = await this.plan.publisher.api.request(
      'POST',
      '/events',
      this.options({ raw: toStructuredMessage(JSON.stringify(broken)), idempotencyKey: randomUUID() }),
    );
    const problem = problemOf(answer);
    const issues = problem?.errors ?? [];
    const named = (attribute: string) => issues.some((issue) => issue.attribute === attribute);
    const problemJson = (answer.headers.get('content-type') ?? '').startsWith('application/problem+json');
    if (
      answer.status !== 400 ||
      problemSlug(answer) !== 'invalid-cloudevent' ||
      !problemJson ||
      !named('specversion') ||
      !named('id')
    ) {
      throw new StepFailed(
        gotOf(answer),
        answer.status === 202
          ? 'the ingest accepted an invalid event: it does not validate; do not put the stack into service.'
          : answer.status === 400
            ? 'a 400 that is not the invalid-cloudevent problem naming specversion and id: another service answered, or an older ingest.'
            : meaningOfAnswer(answer, this.situation('broken-event', this.publisher)),
      );
    }
    return `400 ${problemSlug(answer)}: ${issues.map((issue) => `${issue.attribute} (${issue.requirement ?? issue.rule})`).join(', ')}`;
  }

  // --- receive, compare, fetch, settle ---------------------------------------------------------

  private async receive(): Promise<string | Skipped> {
    if (!this.subscriptionId) return new Skipped('needs the pull subscription');
    if (this.sent.size === 0) return new Skipped('nothing was published');
    const path = `/subscriptions/${encodeURIComponent(this.subscriptionId)}/events/receive`;
    const deadline = Date.now() + this.plan.receiveTimeoutMs;
    let receives = 0;
    while (this.missing().length > 0 && Date.now() < deadline) {
      const waitseconds = Math.max(0, Math.min(20, Math.floor((deadline - Date.now()) / 1000)));
      const answer = await this.plan.consumer.api.request(
        'POST',
        path,
        this.options({ body: { maxevents: 100, waitseconds, lockseconds: 300 } }),
      );
      receives++;
      if (answer.status !== 200)
        throw new StepFailed(gotOf(answer), meaningOfAnswer(answer, this.situation('receive', this.consumer)));
      const { events = [], locks = [] } = (answer.json ?? {}) as { events?: Record<string, unknown>[]; locks?: Lock[] };
      events.forEach((event, i) => {
        const lock = locks[i];
        if (lock) this.locks.push(lock);
        const id = String(event['id']);
        if (this.received.has(id)) this.duplicates++;
        else this.received.set(id, event);
      });
      if (waitseconds === 0 && events.length === 0) break;
    }
    const missing = this.missing();
    const expected = this.sent.size;
    if (missing.length > 0) {
      throw new StepFailed(
        `${expected - missing.length} of ${expected} events within ${Math.round(this.plan.receiveTimeoutMs / 1000)} s; missing ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}`,
        'accepted but not routed to the pull queue: the router is failing (its log group, the inbound queue age and DLQ alarms; its grants on the routes and idempotency tables, ' +
          'the archive bucket and its KMS key, sqs:SendMessage on <stack>-pull-*), or the consumer lost its entitlement meanwhile.',
      );
    }
    const extra = this.duplicates ? `; ${this.duplicates} delivered twice (at least once, EDU-17)` : '';
    return `${expected} of ${expected} events in ${receives} receive${receives === 1 ? '' : 's'}${extra}`;
  }

  private missing(): string[] {
    return [...this.sent.values()]
      .filter((sent) => !this.received.has(sent.event['id'] as string))
      .map((sent) => sent.label);
  }

  private async compare(): Promise<string | Skipped> {
    if (this.received.size === 0) return new Skipped('nothing received');
    const problems: string[] = [];
    const unexpected = [...this.received.keys()].filter((id) => !this.sent.has(id));
    if (unexpected.length) problems.push(`${unexpected.length} event(s) this run did not send`);
    let compared = 0;
    for (const sent of this.sent.values()) {
      const got = this.received.get(sent.event['id'] as string);
      if (!got) continue;
      compared++;
      const difference = sent.data ? this.compareReference(sent, got) : differences(sent.event, got);
      if (difference) problems.push(`${sent.label}: ${difference}`);
    }
    if (problems.length > 0) {
      throw new StepFailed(
        problems.slice(0, 3).join('; ') + (problems.length > 3 ? `; and ${problems.length - 3} more` : ''),
        'Koerier hands events on exactly as accepted (CE-13): something between publish and receive rewrote them; a data contract in warn mode, or a proxy, can.',
      );
    }
    const large = [...this.sent.values()].find((sent) => sent.data);
    return `${compared} events as sent${large && this.received.has(large.event['id'] as string) ? '; the 1 MiB one by reference (dataref, digest, size)' : ''}`;
  }

  private compareReference(sent: Sent, got: Record<string, unknown>): string | undefined {
    if ('data' in got || 'data_base64' in got) return 'came with its data inline, not by reference (claim check)';
    const { dataref, koerierdatadigest, koerierdatasize, ...attributes } = got;
    const { data: _data, ...sentAttributes } = sent.event;
    if (typeof dataref !== 'string') return 'no dataref';
    if (koerierdatadigest !== digestOf(sent.data!))
      return `koerierdatadigest ${String(koerierdatadigest)}, sent data has ${digestOf(sent.data!)}`;
    if (koerierdatasize !== sent.data!.length)
      return `koerierdatasize ${String(koerierdatasize)}, sent ${sent.data!.length} bytes`;
    return differences(sentAttributes, attributes);
  }

  private async payload(): Promise<string | Skipped> {
    const large = [...this.sent.values()].find((sent) => sent.data);
    const got = large && this.received.get(large.event['id'] as string);
    if (!large || !got) return new Skipped('the 1 MiB event was not received');
    const dataref = got['dataref'];
    if (typeof dataref !== 'string') return new Skipped('the 1 MiB event came without dataref');
    // The consumer's token goes only to the gateway it was given for: a dataref naming another
    // origin (the stack's execute-api name behind a custom domain) is read through KOERIER_URL.
    const id = /\/payloads\/([A-Za-z0-9_-]{43})$/.exec(dataref)?.[1];
    if (!id)
      throw new StepFailed(
        `dataref ${dataref}`,
        "not Koerier's data URL (…/payloads/<43 characters>): the ingest's claim check wrote another URL.",
      );
    const sameOrigin = new URL(dataref).origin === new URL(this.plan.gatewayUrl).origin;
    const address = sameOrigin ? dataref : `/payloads/${id}`;
    const answer = await this.plan.consumer.api.request('GET', address, this.options({ redirect: 'manual' }));
    let bytes: Buffer;
    let how: string;
    if (answer.status === 200) {
      bytes = answer.bytes;
      how = '200 from Koerier';
    } else if (answer.status === 307 && answer.headers.get('location')) {
      const object = await this.plan.anonymous.request('GET', answer.headers.get('location')!, this.options());
      if (object.status !== 200) {
        throw new StepFailed(
          `307, then ${object.status} from the presigned URL: ${object.text.slice(0, 160)}`,
          "the presigned URL does not work: the payloads function's role lacks s3:GetObject or kms:Decrypt on the payloads key, or the clock is off.",
        );
      }
      bytes = object.bytes;
      how = '307 to a presigned URL';
    } else {
      throw new StepFailed(gotOf(answer), meaningOfAnswer(answer, this.situation('payload', this.consumer)));
    }
    const digest = digestOf(bytes);
    const reprDigest = answer.headers.get('repr-digest');
    const wrong = [
      bytes.length !== got['koerierdatasize']
        ? `${bytes.length} bytes, koerierdatasize ${String(got['koerierdatasize'])}`
        : undefined,
      digest !== got['koerierdatadigest']
        ? `digest ${digest}, koerierdatadigest ${String(got['koerierdatadigest'])}`
        : undefined,
      reprDigest && reprDigest !== digest ? `Repr-Digest ${reprDigest}` : undefined,
      !bytes.equals(large.data!) ? 'not the bytes published' : undefined,
    ].filter(Boolean);
    if (wrong.length)
      throw new StepFailed(
        wrong.join('; '),
        'the stored object differs from what was published: the payloads bucket was written by something else, or a proxy changed the body.',
      );
    return `${bytes.length.toLocaleString('en-US')} bytes, digest and size match (${how})`;
  }

  private async acknowledge(): Promise<string | Skipped> {
    if (!this.subscriptionId || this.locks.length === 0) return new Skipped('nothing received');
    const path = `/subscriptions/${encodeURIComponent(this.subscriptionId)}/events/acknowledge`;
    let succeeded = 0;
    const failed: string[] = [];
    for (let start = 0; start < this.locks.length; start += 100) {
      const locktokens = this.locks.slice(start, start + 100).map((lock) => lock.locktoken);
      const answer = await this.plan.consumer.api.request('POST', path, this.options({ body: { locktokens } }));
      if (answer.status !== 200)
        throw new StepFailed(gotOf(answer), meaningOfAnswer(answer, this.situation('acknowledge', this.consumer)));
      const settled = (answer.json ?? {}) as { succeeded?: unknown[]; failed?: { error?: { code?: string } }[] };
      succeeded += settled.succeeded?.length ?? 0;
      failed.push(...(settled.failed ?? []).map((failure) => failure.error?.code ?? '?'));
    }
    if (failed.length > 0) {
      throw new StepFailed(
        `${succeeded} acknowledged, ${failed.length} failed (${[...new Set(failed)].join(', ')})`,
        'LockLost: the locks ran out before the acknowledge (a slow run); anything else: the pull function cannot open its lock tokens (the lock-token KMS key).',
      );
    }
    return `${succeeded} acknowledged`;
  }

  // --- clean up ----------------------------------------------------------------------------------

  private async cleanUp(): Promise<string | Skipped> {
    if (!this.tokensOk.consumer) return new Skipped('nothing made');
    const api = this.plan.consumer.api;
    const deleted: string[] = [];
    const remove = async (id: string) => {
      const answer = await api.request('DELETE', `/subscriptions/${encodeURIComponent(id)}`, {
        idempotencyKey: randomUUID(),
      });
      if (answer.status >= 300 && answer.status !== 404) {
        throw new StepFailed(
          `DELETE /subscriptions/${id}: ${gotOf(answer)}`,
          `${meaningOfAnswer(answer, this.situation('cleanup', this.consumer))} Delete it by hand: koerier subscriptions delete ${id}.`,
        );
      }
      if (answer.status < 300) deleted.push(id);
    };
    if (this.subscriptionId) await remove(this.subscriptionId);
    // A create whose answer was lost (or cut off by Ctrl-C) still left its subscription: find every one of this run's source.
    const left = await api
      .listAll<{ id: string; source?: string }>('/subscriptions', 'subscriptions', { limit: 100 })
      .catch((error: unknown) => {
        if (error instanceof CliError && deleted.length > 0) return [];
        throw error;
      });
    for (const subscription of left.filter((s) => s.source === this.source)) await remove(subscription.id);
    if (deleted.length === 0) return 'nothing to delete; no subscription of this run left';
    return `deleted subscription ${deleted.join(', ')} and its queues; none of this run left`;
  }

  private situation(kind: StepKind, party: Party): Situation {
    return { kind, party, source: this.source, type: this.plan.type };
  }
}

/** The got/meaning of anything a step threw. */
function explain(error: unknown, situation: Situation): { got: string; meaning: string } {
  if (error instanceof StepFailed) return { got: error.got, meaning: error.meaning };
  if (error instanceof CliError) {
    if (situation.kind === 'token')
      return {
        got: error.message,
        meaning: meaningOfTokenFailure(error.message, situation.party?.clientId ?? 'the client'),
      };
    if (error.exitCode === exitCodes.unavailable) return { got: error.message, meaning: meaningOfUnreachable() };
    if (error.exitCode === exitCodes.auth || error.exitCode === exitCodes.usage) {
      return {
        got: error.message,
        meaning: meaningOfTokenFailure(error.message, situation.party?.clientId ?? 'the client'),
      };
    }
    return { got: error.message, meaning: `a ${neededScope(situation.kind)} call refused; the message says why.` };
  }
  return {
    got: error instanceof Error ? error.message : String(error),
    meaning: 'a failure of the doctor itself: please report it with --json output.',
  };
}

function warningsText(warnings: readonly unknown[] | undefined): string {
  return warnings?.length ? ` (${warnings.length} warning${warnings.length === 1 ? '' : 's'})` : '';
}

/** The first differing member of two events, or undefined when they are the same (member order aside). */
function differences(sent: Record<string, unknown>, got: Record<string, unknown>): string | undefined {
  const names = [...new Set([...Object.keys(sent), ...Object.keys(got)])];
  const differing = names.filter((name) => !isDeepStrictEqual(sent[name], got[name]));
  if (differing.length === 0) return undefined;
  return differing
    .slice(0, 2)
    .map((name) => `${name} sent ${short(sent[name])}, got ${short(got[name])}`)
    .join('; ');
}

function short(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** The scopes a JWT access token carries (`scope`, `scp` or `roles`), or undefined for a token this CLI cannot read. */
function scopesOf(token: string): string[] | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const claim of ['scope', 'scp', 'roles']) {
      const value = claims[claim];
      if (typeof value === 'string') return value.split(' ').filter(Boolean);
      if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
    }
    return [];
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}
