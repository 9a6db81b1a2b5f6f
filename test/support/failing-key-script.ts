/**
 * The receiver of the ordered failure tests (issue 33, must show: "a target failing for one key
 * (500 for 30 s, then 415 once)"): one event of one key is refused, everything else taken, and each
 * answer is logged in order (test/e2e/ordered-failures.test.ts, ordered-failures-restart.test.ts).
 */
import type { ReceiverScript } from './https-receiver.js';

/** One request as the receiver answered it. */
export interface FailingKeyAnswer {
  readonly id: string;
  readonly key: string;
  readonly n: number;
  readonly sequence: number;
  readonly status: number;
  readonly at: number;
  readonly idempotencyKey: string;
}

export interface FailingKeyPlan {
  /** The failing event: `data.n` of the events with this `partitionkey`. */
  readonly key: string;
  readonly n: number;
  /** How long it is answered 500, from its first attempt; then 415 once, then 204. */
  readonly failMs: number;
  /** Every 204 comes this late (default at once), so other keys are still in flight at a given moment. */
  readonly answerDelayMs?: number;
}

export function failingKeyScript(plan: FailingKeyPlan): { script: ReceiverScript; answered: FailingKeyAnswer[] } {
  const answered: FailingKeyAnswer[] = [];
  let failingSince: number | undefined;
  let refused = false;
  const script: ReceiverScript = (_, request) => {
    const event = JSON.parse(request.body) as {
      id: string;
      partitionkey: string;
      sequence: string;
      data: { n: number };
    };
    let status = 204;
    if (event.partitionkey === plan.key && event.data.n === plan.n) {
      failingSince ??= request.receivedAt;
      if (request.receivedAt - failingSince < plan.failMs) status = 500;
      else if (!refused) [status, refused] = [415, true];
    }
    answered.push({
      id: event.id,
      key: event.partitionkey,
      n: event.data.n,
      sequence: Number(event.sequence),
      status,
      at: request.receivedAt,
      idempotencyKey: request.headers['idempotency-key'] ?? '',
    });
    return status === 204 && plan.answerDelayMs !== undefined
      ? { respond: 204, delayMs: plan.answerDelayMs }
      : { respond: status };
  };
  return { script, answered };
}
