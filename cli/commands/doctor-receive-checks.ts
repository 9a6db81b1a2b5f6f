/**
 * The doctor's checks that take the run's events back: receiving them through the pull API, comparing
 * each with what was sent (the 1 MiB one arrives by reference), fetching the claim-checked data,
 * acknowledging, and deleting the subscriptions this run made, also after a failure or Ctrl-C.
 */
import { isDeepStrictEqual } from 'node:util';
import { digestOf, payloadIdInDataref } from '../../functions/core/claim-check/payload-reference.js';
import { CliError } from '../exit-codes.js';
import { gotOf, meaningOfAnswer } from './doctor-meanings.js';
import { answerOfOutcome, Skipped, StepFailed, type DoctorRun, type Sent } from './doctor-run.js';

export async function checkReceive(run: DoctorRun): Promise<string | Skipped> {
  const id = run.subscriptionId;
  if (!id) return new Skipped('needs the pull subscription');
  if (run.sent.size === 0) return new Skipped('nothing was published');
  const deadline = Date.now() + run.plan.receiveTimeoutMs;
  let receives = 0;
  while (missing(run).length > 0 && Date.now() < deadline) {
    const waitseconds = Math.max(0, Math.min(20, Math.floor((deadline - Date.now()) / 1000)));
    const { data } = await run.expect(run.plan.consumer.api, run.situation('receive', run.consumer), (api) =>
      api.POST('/subscriptions/{id}/events/receive', {
        params: { path: { id } },
        body: { maxevents: 100, waitseconds, lockseconds: 300 },
        signal: run.plan.signal,
      }),
    );
    receives++;
    const events = (data.events ?? []) as Record<string, unknown>[];
    events.forEach((event, i) => {
      const lock = data.locks?.[i];
      if (lock) run.locktokens.push(lock.locktoken);
      const eventId = String(event['id']);
      if (run.received.has(eventId)) run.duplicates++;
      else run.received.set(eventId, event);
    });
    if (waitseconds === 0 && events.length === 0) break;
  }
  const left = missing(run);
  const expected = run.sent.size;
  if (left.length > 0) {
    throw new StepFailed(
      `${expected - left.length} of ${expected} events within ${Math.round(run.plan.receiveTimeoutMs / 1000)} s; missing ${left.slice(0, 3).join(', ')}${left.length > 3 ? ', …' : ''}`,
      'accepted but not routed to the pull queue: the router is failing (its log group, the inbound queue age and DLQ alarms; its grants on the routes and idempotency tables, ' +
        'the archive bucket and its KMS key, sqs:SendMessage on <stack>-pull-*), or the consumer lost its entitlement meanwhile.',
    );
  }
  const extra = run.duplicates ? `; ${run.duplicates} delivered twice (at least once, EDU-17)` : '';
  return `${expected} of ${expected} events in ${receives} receive${receives === 1 ? '' : 's'}${extra}`;
}

function missing(run: DoctorRun): string[] {
  return [...run.sent.values()]
    .filter((sent) => !run.received.has(sent.event['id'] as string))
    .map((sent) => sent.label);
}

export async function checkArrivedAsSent(run: DoctorRun): Promise<string | Skipped> {
  if (run.received.size === 0) return new Skipped('nothing received');
  const problems: string[] = [];
  const unexpected = [...run.received.keys()].filter((id) => !run.sent.has(id));
  if (unexpected.length) problems.push(`${unexpected.length} event(s) this run did not send`);
  let compared = 0;
  for (const sent of run.sent.values()) {
    const got = run.received.get(sent.event['id'] as string);
    if (!got) continue;
    compared++;
    const difference = sent.data ? compareReference(sent, sent.data, got) : differences(sent.event, got);
    if (difference) problems.push(`${sent.label}: ${difference}`);
  }
  if (problems.length > 0) {
    throw new StepFailed(
      problems.slice(0, 3).join('; ') + (problems.length > 3 ? `; and ${problems.length - 3} more` : ''),
      'Koerier hands events on exactly as accepted (CE-13): something between publish and receive rewrote them; a data contract in warn mode, or a proxy, can.',
    );
  }
  const large = [...run.sent.values()].find((sent) => sent.data);
  return `${compared} events as sent${large && run.received.has(large.event['id'] as string) ? '; the 1 MiB one by reference (dataref, digest, size)' : ''}`;
}

function compareReference(sent: Sent, data: Buffer, got: Record<string, unknown>): string | undefined {
  if ('data' in got || 'data_base64' in got) return 'came with its data inline, not by reference (claim check)';
  const { dataref, koerierdatadigest, koerierdatasize, ...attributes } = got;
  const { data: _data, ...sentAttributes } = sent.event;
  if (typeof dataref !== 'string') return 'no dataref';
  if (koerierdatadigest !== digestOf(data))
    return `koerierdatadigest ${String(koerierdatadigest)}, sent data has ${digestOf(data)}`;
  if (koerierdatasize !== data.length) return `koerierdatasize ${String(koerierdatasize)}, sent ${data.length} bytes`;
  return differences(sentAttributes, attributes);
}

export async function checkPayload(run: DoctorRun): Promise<string | Skipped> {
  const large = [...run.sent.values()].find((sent) => sent.data);
  const got = large && run.received.get(large.event['id'] as string);
  if (!large?.data || !got) return new Skipped('the 1 MiB event was not received');
  const dataref = got['dataref'];
  if (typeof dataref !== 'string') return new Skipped('the 1 MiB event came without dataref');
  // The consumer's token goes only to the gateway it was given for: the data is read through
  // KOERIER_URL by its id, whatever origin the dataref names (the stack's execute-api name behind a custom domain).
  const id = payloadIdInDataref(dataref);
  if (!id)
    throw new StepFailed(
      `dataref ${dataref}`,
      "not Koerier's data URL (…/payloads/<43 characters>): the ingest's claim check wrote another URL.",
    );
  const { data, response } = await run.expect(run.plan.consumer.api, run.situation('payload', run.consumer), (api) =>
    // `manual`: a 307's Location is a presigned URL, read without the bearer token.
    api.GET('/payloads/{id}', {
      params: { path: { id } },
      parseAs: 'arrayBuffer',
      redirect: 'manual',
      signal: run.plan.signal,
    }),
  );
  let bytes: Buffer;
  let how: string;
  const location = response.headers.get('location');
  if (response.status === 200 && data) {
    bytes = Buffer.from(data);
    how = '200 from Koerier';
  } else if (response.status === 307 && location) {
    // The object store's URL, not the API: an untyped request, without a token.
    const object = await run.plan.anonymous.request('GET', location, run.options());
    if (object.status !== 200) {
      throw new StepFailed(
        `307, then ${object.status} from the presigned URL: ${object.text.slice(0, 160)}`,
        "the presigned URL does not work: the payloads function's role lacks s3:GetObject or kms:Decrypt on the payloads key, or the clock is off.",
      );
    }
    bytes = object.bytes;
    how = '307 to a presigned URL';
  } else {
    const answer = answerOfOutcome({ ok: true, data: undefined, response });
    throw new StepFailed(gotOf(answer), meaningOfAnswer(answer, run.situation('payload', run.consumer)));
  }
  const digest = digestOf(bytes);
  const reprDigest = response.headers.get('repr-digest');
  const wrong = [
    bytes.length !== got['koerierdatasize']
      ? `${bytes.length} bytes, koerierdatasize ${String(got['koerierdatasize'])}`
      : undefined,
    digest !== got['koerierdatadigest']
      ? `digest ${digest}, koerierdatadigest ${String(got['koerierdatadigest'])}`
      : undefined,
    reprDigest && reprDigest !== digest ? `Repr-Digest ${reprDigest}` : undefined,
    !bytes.equals(large.data) ? 'not the bytes published' : undefined,
  ].filter(Boolean);
  if (wrong.length)
    throw new StepFailed(
      wrong.join('; '),
      'the stored object differs from what was published: the payloads bucket was written by something else, or a proxy changed the body.',
    );
  return `${bytes.length.toLocaleString('en-US')} bytes, digest and size match (${how})`;
}

export async function checkAcknowledge(run: DoctorRun): Promise<string | Skipped> {
  const id = run.subscriptionId;
  if (!id || run.locktokens.length === 0) return new Skipped('nothing received');
  let succeeded = 0;
  const failed: string[] = [];
  for (let start = 0; start < run.locktokens.length; start += 100) {
    const locktokens = run.locktokens.slice(start, start + 100);
    const { data } = await run.expect(run.plan.consumer.api, run.situation('acknowledge', run.consumer), (api) =>
      api.POST('/subscriptions/{id}/events/acknowledge', {
        params: { path: { id } },
        body: { locktokens },
        signal: run.plan.signal,
      }),
    );
    succeeded += data.succeeded?.length ?? 0;
    failed.push(...(data.failed ?? []).map((failure) => failure.error?.code ?? '?'));
  }
  if (failed.length > 0) {
    throw new StepFailed(
      `${succeeded} acknowledged, ${failed.length} failed (${[...new Set(failed)].join(', ')})`,
      'LockLost: the locks ran out before the acknowledge (a slow run); anything else: the pull function cannot open its lock tokens (the lock-token KMS key).',
    );
  }
  return `${succeeded} acknowledged`;
}

export async function cleanUp(run: DoctorRun): Promise<string | Skipped> {
  if (!run.tokensOk.consumer) return new Skipped('nothing made');
  const client = run.plan.consumer.api;
  const deleted: string[] = [];
  const remove = async (id: string) => {
    const outcome = await client.outcome((api) => api.DELETE('/subscriptions/{id}', { params: { path: { id } } }));
    if (!outcome.ok && outcome.refusal.status !== 404) {
      throw new StepFailed(
        `DELETE /subscriptions/${id}: ${gotOf(outcome.refusal)}`,
        `${meaningOfAnswer(outcome.refusal, run.situation('cleanup', run.consumer))} Delete it by hand: koerier subscriptions delete ${id}.`,
      );
    }
    if (outcome.ok) deleted.push(id);
  };
  if (run.subscriptionId) await remove(run.subscriptionId);
  // A create whose answer was lost (or cut off by Ctrl-C) still left its subscription: find every one of this run's source.
  const left = await client
    .listAll<{ id: string; source?: string }>('/subscriptions', 'subscriptions', { limit: 100 })
    .catch((error: unknown) => {
      if (error instanceof CliError && deleted.length > 0) return [];
      throw error;
    });
  for (const subscription of left.filter((s) => s.source === run.source)) await remove(subscription.id);
  if (deleted.length === 0) return 'nothing to delete; no subscription of this run left';
  return `deleted subscription ${deleted.join(', ')} and its queues; none of this run left`;
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
