/**
 * What the checks of one `koerier doctor` run share: the plan they follow, what the run has made and
 * seen so far (its subscription, the events it sent and received, their locks), the two ways a step
 * ends other than well (StepFailed, Skipped), and how a check makes a typed call whose refusal fails
 * the step with what that refusal usually means (./doctor-meanings.ts).
 */
import { randomUUID } from 'node:crypto';
import type { KoerierClient } from '../api-client.js';
import { answerOfData, type ApiAnswer, type Outcome, type RequestOptions, type TokenSource } from '../api-client.js';
import { gotOf, meaningOfAnswer, type Party, type Situation, type StepKind } from './doctor-meanings.js';

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

/** A step that did not get what it expected: `got` is what it got, `meaning` what that usually means. */
export class StepFailed extends Error {
  constructor(
    readonly got: string,
    readonly meaning: string,
  ) {
    super(got);
  }
}

/** A step with nothing to do here (not a failure). */
export class Skipped {
  constructor(readonly detail: string) {}
}

export interface Sent {
  readonly label: string;
  readonly event: Record<string, unknown>;
  /** For the claim-checked event: the data's bytes as Koerier stores them. */
  readonly data?: Buffer;
}

/** A raw HTTP message of a CloudEvent (structured, batch or binary mode), as the http-binding writes it. */
export interface EventMessage {
  readonly body: Buffer;
  readonly headers: Record<string, string>;
}

/** The first publication, kept to send again with the same Idempotency-Key. */
export interface FirstPublish {
  readonly key: string;
  readonly message: EventMessage;
  readonly status: number;
  readonly text: string;
}

/** One run: its plan and name, and what its steps have made and seen so far. */
export class DoctorRun {
  readonly publisher: Party;
  readonly consumer: Party;
  readonly tokensOk = { publisher: false, consumer: false };
  subscriptionId: string | undefined;
  /** Accepted publications, by event id. */
  readonly sent = new Map<string, Sent>();
  readonly received = new Map<string, Record<string, unknown>>();
  readonly locktokens: string[] = [];
  duplicates = 0;
  firstPublish: FirstPublish | undefined;

  constructor(
    readonly plan: DoctorPlan,
    readonly run: string,
    readonly source: string,
  ) {
    this.publisher = { clientId: plan.publisher.clientId, role: 'publisher' };
    this.consumer = { clientId: plan.consumer.clientId, role: 'consumer' };
  }

  get separate(): boolean {
    return this.plan.consumer !== this.plan.publisher;
  }

  options(extra: RequestOptions = {}): RequestOptions {
    return { signal: this.plan.signal, ...extra };
  }

  /** A new event of this run: its source and type, a subject naming the run, the check and the event's number. */
  event(kind: string, n: number, data: unknown = { doctor: this.run, kind, n }): Record<string, unknown> {
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

  situation(kind: StepKind, party?: Party): Situation {
    return { kind, ...(party ? { party } : {}), source: this.source, type: this.plan.type };
  }

  /** A typed call's data and response; a refusal fails the step with what it usually means in `situation`. */
  async expect<T>(
    client: KoerierClient,
    situation: Situation,
    call: (api: KoerierClient['api']) => Promise<{ data?: T; response?: Response }>,
  ): Promise<{ data: T; response: Response }> {
    const outcome = await client.outcome(call);
    if (!outcome.ok) throw new StepFailed(gotOf(outcome.refusal), meaningOfAnswer(outcome.refusal, situation));
    return outcome;
  }
}

/** Any outcome as the answer a step's explanation reads: the refusal, or the data written back as JSON. */
export function answerOfOutcome(outcome: Outcome<unknown>): ApiAnswer {
  return outcome.ok ? answerOfData(outcome.response, outcome.data) : outcome.refusal;
}

/** POST /events of a message as it is (binary mode is not a JSON body the generated client could write). */
export function postMessage(api: KoerierClient['api'], message: EventMessage, key: string, signal?: AbortSignal) {
  return api.POST('/events', {
    body: message.body as never,
    bodySerializer: (body: unknown) => body,
    headers: message.headers,
    params: { header: { 'Idempotency-Key': key } },
    parseAs: 'text',
    ...(signal ? { signal } : {}),
  });
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}
