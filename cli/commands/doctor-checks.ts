/**
 * The checks `koerier doctor` runs against a live gateway, in order, each timed and reported as
 * one step: the API description, `/health`, a token per client, a call without a token (401)
 * (./doctor-gateway-checks.ts); a temporary pull subscription, four publications (structured, a
 * batch of ten, binary, 1 MiB by claim check), a repeat with the same Idempotency-Key, a broken event
 * (400) (./doctor-publish-checks.ts); receiving everything back through the pull API and comparing it
 * with what was sent, fetching the claim-checked data, acknowledging, and deleting what the run made
 * (./doctor-receive-checks.ts). A step that cannot run because an earlier one failed is skipped, with why.
 *
 * Every run publishes under its own source (`<base>:<run>` under a URN, `<base>/<run>` otherwise)
 * and subscribes to exactly that source, so runs side by side never see each other's events.
 */
import { randomUUID } from 'node:crypto';
import { CliError, exitCodes } from '../exit-codes.js';
import { checkDescription, checkHealth, checkToken, checkUnauthenticated } from './doctor-gateway-checks.js';
import {
  meaningOfTokenFailure,
  meaningOfUnreachable,
  neededScope,
  type Party,
  type Situation,
  type StepKind,
} from './doctor-meanings.js';
import {
  BATCH_SIZE,
  checkBroken,
  checkPublishBatch,
  checkPublishBinary,
  checkPublishLarge,
  checkPublishStructured,
  checkRepeat,
  checkSubscribe,
} from './doctor-publish-checks.js';
import { checkAcknowledge, checkArrivedAsSent, checkPayload, checkReceive, cleanUp } from './doctor-receive-checks.js';
import { DoctorRun, Skipped, StepFailed, type DoctorPlan, type StepReport } from './doctor-run.js';

export type { DoctorClient, DoctorPlan, StepReport, StepResult } from './doctor-run.js';
export { LARGE_DATA_BYTES } from './doctor-publish-checks.js';

export const DOCTOR_TYPE = 'nl.koerier.doctor.check';
export const DOCTOR_SOURCE = 'urn:nld:koerier:doctor';

export interface DoctorOutcome {
  readonly run: string;
  readonly source: string;
  readonly steps: readonly StepReport[];
  readonly interrupted: boolean;
}

/** A run's source under the grant: a URN continues with `:`, anything else with `/` (publish grants end on those boundaries). */
export function runSource(base: string, run: string): string {
  const separator = base.toLowerCase().startsWith('urn:') ? ':' : '/';
  return base.endsWith(separator) ? `${base}${run}` : `${base}${separator}${run}`;
}

export async function runDoctor(plan: DoctorPlan): Promise<DoctorOutcome> {
  const name = `${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomUUID().slice(0, 8)}`;
  const run = new DoctorRun(plan, name, runSource(plan.sourceBase, name));
  const steps: StepReport[] = [];
  const record = (report: StepReport) => {
    steps.push(report);
    plan.onStep?.(report);
  };
  const step = (name: string, kind: StepKind, check: (run: DoctorRun) => Promise<string | Skipped>, party?: Party) =>
    runStep(run, record, { name, kind, check, ...(party ? { party } : {}) });
  const { publisher, consumer } = run;
  try {
    await step('API description', 'description', checkDescription);
    await step('/health', 'health', checkHealth);
    await step(`token for ${publisher.clientId}`, 'token', (r) => checkToken(r, 'publisher'), publisher);
    if (run.separate) await step(`token for ${consumer.clientId}`, 'token', (r) => checkToken(r, 'consumer'), consumer);
    await step('no token → 401', 'unauthenticated', checkUnauthenticated);
    await step('pull subscription', 'subscribe', checkSubscribe, consumer);
    await step('publish 1 event (structured)', 'publish', checkPublishStructured, publisher);
    await step(`publish a batch of ${BATCH_SIZE}`, 'publish', checkPublishBatch, publisher);
    await step('publish 1 event (binary)', 'publish', checkPublishBinary, publisher);
    await step('publish 1 MiB (claim check)', 'publish-large', checkPublishLarge, publisher);
    await step('same Idempotency-Key again', 'idempotency', checkRepeat, publisher);
    await step('broken event → 400', 'broken-event', checkBroken, publisher);
    await step('receive (pull)', 'receive', checkReceive, consumer);
    await step('arrived as sent', 'receive', checkArrivedAsSent);
    await step('claim check data', 'payload', checkPayload, consumer);
    await step('acknowledge', 'acknowledge', checkAcknowledge, consumer);
  } finally {
    // Also after Ctrl-C, and after a failure of the doctor itself.
    await runStep(run, record, { name: 'clean up', kind: 'cleanup', check: cleanUp, party: consumer }, true);
  }
  return { run: run.run, source: run.source, steps, interrupted: plan.signal.aborted };
}

interface Step {
  readonly name: string;
  readonly kind: StepKind;
  readonly check: (run: DoctorRun) => Promise<string | Skipped>;
  readonly party?: Party;
}

/** Runs one check, timed, and records how it ended: ok, failed (what it got, what that means) or skipped. */
async function runStep(
  run: DoctorRun,
  record: (report: StepReport) => void,
  { name, kind, check, party }: Step,
  evenWhenInterrupted = false,
): Promise<void> {
  const { signal } = run.plan;
  if (signal.aborted && !evenWhenInterrupted) {
    record({ step: name, result: 'skipped', latencyMs: null, detail: 'interrupted (Ctrl-C)' });
    return;
  }
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const outcome = await check(run);
    if (outcome instanceof Skipped) record({ step: name, result: 'skipped', latencyMs: null, detail: outcome.detail });
    else record({ step: name, result: 'ok', latencyMs: latency(), detail: outcome });
  } catch (error) {
    if (signal.aborted && !evenWhenInterrupted) {
      record({ step: name, result: 'skipped', latencyMs: latency(), detail: 'interrupted (Ctrl-C)' });
      return;
    }
    const { got, meaning } = explain(error, run.situation(kind, party));
    record({ step: name, result: 'failed', latencyMs: latency(), detail: got, got, meaning });
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
