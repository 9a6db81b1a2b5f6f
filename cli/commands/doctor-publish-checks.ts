/**
 * The doctor's checks that make something: a temporary pull subscription to exactly this run's source,
 * four publications (structured, a batch, binary mode, 1 MiB by claim check), the first one again
 * with the same Idempotency-Key (answered from the idempotency table), and a broken event (400).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  toBatchMessage,
  toBinaryMessage,
  toStructuredMessage,
} from '../../functions/core/cloudevents/http-binding/to-message.js';
import { answerOfData, problemOf } from '../api-client.js';
import { gotOf, meaningOfAnswer, problemSlug, type StepKind } from './doctor-meanings.js';
import {
  answerOfOutcome,
  postMessage,
  Skipped,
  sleep,
  StepFailed,
  type DoctorRun,
  type EventMessage,
  type Sent,
} from './doctor-run.js';

/** The claim-checked event's data: 1 MiB of JSON, well above the 64 KiB inline limit. */
export const LARGE_DATA_BYTES = 1_048_576;
export const BATCH_SIZE = 10;

export async function checkSubscribe(run: DoctorRun): Promise<string | Skipped> {
  if (!run.tokensOk.consumer) return new Skipped(`needs a token for ${run.consumer.clientId}`);
  // Not aborted by Ctrl-C: the answer names the subscription the clean-up deletes.
  const { data: created } = await run.expect(run.plan.consumer.api, run.situation('subscribe', run.consumer), (api) =>
    api.POST('/subscriptions', {
      body: {
        delivery: 'pull',
        types: [run.plan.type],
        source: run.source,
        maxdeliverycount: 5,
        retentionseconds: 3600,
      },
    }),
  );
  run.subscriptionId = created.id;
  if (created.status !== 'active') {
    throw new StepFailed(
      `created ${created.id}, status ${created.status ?? '?'}`,
      'a pull subscription is active at once; the problem is in the subscriptions function.',
    );
  }
  return `${created.id}: ${run.plan.type} from ${run.source}`;
}

/** Publishes one message; answers the 202 body, or fails the step with what came back. */
async function publish(
  run: DoctorRun,
  message: EventMessage,
  events: readonly Sent[],
  kind: StepKind = 'publish',
  key = randomUUID(),
): Promise<{ acceptedCount?: number; warnings?: unknown[]; status: number; text: string }> {
  const { data: text, response } = await run.expect(run.plan.publisher.api, run.situation(kind, run.publisher), (api) =>
    postMessage(api, message, key, run.plan.signal),
  );
  if (response.status !== 202) {
    const answer = answerOfData(response, text);
    throw new StepFailed(gotOf(answer), meaningOfAnswer(answer, run.situation(kind, run.publisher)));
  }
  const body = JSON.parse(text || '{}') as { acceptedCount?: number; warnings?: unknown[] };
  if (body.acceptedCount !== events.length) {
    throw new StepFailed(
      `202 with acceptedCount ${String(body.acceptedCount)} for ${events.length}`,
      'the ingest accepted a different number of events than it was sent.',
    );
  }
  for (const sent of events) run.sent.set(sent.event['id'] as string, sent);
  return { ...body, status: response.status, text };
}

function publishable(run: DoctorRun): Skipped | undefined {
  return run.tokensOk.publisher ? undefined : new Skipped(`needs a token for ${run.publisher.clientId}`);
}

export async function checkPublishStructured(run: DoctorRun): Promise<string | Skipped> {
  const skip = publishable(run);
  if (skip) return skip;
  const event = run.event('structured', 1);
  const message = toStructuredMessage(JSON.stringify(event));
  const key = randomUUID();
  const { warnings, status, text } = await publish(
    run,
    message,
    [{ label: 'the structured event', event }],
    'publish',
    key,
  );
  run.firstPublish = { key, message, status, text };
  return `202, 1 accepted${warningsText(warnings)}`;
}

export async function checkPublishBatch(run: DoctorRun): Promise<string | Skipped> {
  const skip = publishable(run);
  if (skip) return skip;
  const events = Array.from({ length: BATCH_SIZE }, (_, i) => run.event('batch', i + 1));
  const { warnings } = await publish(
    run,
    toBatchMessage(events.map((event) => JSON.stringify(event))),
    events.map((event, i) => ({ label: `batch event ${i + 1}`, event })),
  );
  return `202, ${BATCH_SIZE} accepted${warningsText(warnings)}`;
}

export async function checkPublishBinary(run: DoctorRun): Promise<string | Skipped> {
  const skip = publishable(run);
  if (skip) return skip;
  const event = run.event('binary', 1);
  const { warnings } = await publish(run, toBinaryMessage(JSON.stringify(event)), [
    { label: 'the binary-mode event', event },
  ]);
  return `202, 1 accepted${warningsText(warnings)}`;
}

export async function checkPublishLarge(run: DoctorRun): Promise<string | Skipped> {
  const skip = publishable(run);
  if (skip) return skip;
  // JSON data of exactly LARGE_DATA_BYTES: random base64url filler, so nothing in between can shrink it.
  const shell = JSON.stringify({ doctor: run.run, kind: 'claim-check', filler: '' });
  const filler = randomBytes(LARGE_DATA_BYTES)
    .toString('base64url')
    .slice(0, LARGE_DATA_BYTES - Buffer.byteLength(shell));
  const data = { doctor: run.run, kind: 'claim-check', filler };
  const bytes = Buffer.from(JSON.stringify(data), 'utf8');
  const event = run.event('claim-check', 1, data);
  const { warnings } = await publish(
    run,
    toStructuredMessage(JSON.stringify(event)),
    [{ label: 'the 1 MiB event', event, data: bytes }],
    'publish-large',
  );
  return `202, ${bytes.length.toLocaleString('en-US')} bytes of data accepted${warningsText(warnings)}`;
}

export async function checkRepeat(run: DoctorRun): Promise<string | Skipped> {
  const first = run.firstPublish;
  if (!first) return new Skipped('needs the structured publication');
  const started = Date.now();
  let waited = 0;
  for (;;) {
    const outcome = await run.plan.publisher.api.outcome((api) =>
      postMessage(api, first.message, first.key, run.plan.signal),
    );
    const answer = outcome.ok ? { ...answerOfOutcome(outcome), text: outcome.data ?? '' } : answerOfOutcome(outcome);
    // Another container may still hold the first attempt's lock (docs/DEPLOYING.md, koerier:idempotencyLockSeconds): wait as told.
    if (
      answer.status === 409 &&
      problemSlug(answer) === 'idempotency-key-in-progress' &&
      Date.now() - started < 120_000
    ) {
      const seconds = Math.min(Number(answer.headers.get('retry-after')) || 1, 30);
      waited += seconds;
      await sleep(seconds * 1000, run.plan.signal);
      continue;
    }
    const replayed = answer.headers.get('idempotent-replayed') === 'true';
    // The stored answer byte for byte: the text as received, not the JSON it parses to.
    if (answer.status !== first.status || !replayed || answer.text !== first.text) {
      const got = `${gotOf(answer)}${replayed ? '' : ' (no Idempotent-Replayed: true)'}`;
      throw new StepFailed(
        answer.status === first.status ? `${got}; the body differs from the first answer` : got,
        answer.status === 202 && !replayed
          ? 'the repeat was processed again instead of answered from the idempotency table: the ingest cannot read or write the idempotency table (its log group).'
          : meaningOfAnswer(answer, run.situation('idempotency', run.publisher)),
      );
    }
    return `${answer.status}, the stored answer, Idempotent-Replayed: true${waited ? ` (after ${waited} s of 409 in progress)` : ''}`;
  }
}

export async function checkBroken(run: DoctorRun): Promise<string | Skipped> {
  const skip = publishable(run);
  if (skip) return skip;
  const broken = { specversion: '0.3', id: '', source: run.source, type: run.plan.type };
  const outcome = await run.plan.publisher.api.outcome((api) =>
    postMessage(api, toStructuredMessage(JSON.stringify(broken)), randomUUID(), run.plan.signal),
  );
  const answer = answerOfOutcome(outcome);
  const issues = problemOf(answer)?.errors ?? [];
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
          : meaningOfAnswer(answer, run.situation('broken-event', run.publisher)),
    );
  }
  return `400 ${problemSlug(answer)}: ${issues.map((issue) => `${issue.attribute} (${issue.requirement ?? issue.rule})`).join(', ')}`;
}

function warningsText(warnings: readonly unknown[] | undefined): string {
  return warnings?.length ? ` (${warnings.length} warning${warnings.length === 1 ? '' : 's'})` : '';
}
