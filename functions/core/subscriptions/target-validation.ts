/**
 * The validation handshake as a create or a change runs it (WH-4): a new approval token and
 * window, the OPTIONS request to the target (`webhooks/validation-handshake.ts`), and the
 * target's answer stored through the lifecycle (`lifecycle.ts`), also when the target approved
 * through the callback while Koerier was still waiting for that answer.
 */
import { requestValidation, type ValidationTransport } from '../webhooks/validation-handshake.js';
import { newApprovalToken } from './approval-token.js';
import * as lifecycle from './lifecycle.js';
import { SubscriptionConflictError, type SubscriptionStore } from './store.js';
import type { Subscription } from './subscription.js';

export interface TargetValidationContext {
  readonly store: Pick<SubscriptionStore, 'get' | 'save'>;
  readonly send: ValidationTransport;
  readonly settings: {
    /** `WebHook-Request-Origin`. */
    readonly webhookOrigin: string;
    /** Base of the callback URL; without it no asynchronous approval is offered. */
    readonly publicBaseUrl: string;
    readonly requestRatePerMinute?: number | undefined;
  };
  readonly now: () => Date;
}

/** A new approval token (kept only as its hash) and the end of the window to use it in. */
export function openHandshake(now: Date, windowSeconds: number): { token: string; fields: lifecycle.OpenHandshake } {
  const { token, hash } = newApprovalToken();
  return {
    token,
    fields: { validationTokenHash: hash, validationExpiresAt: lifecycle.approvalWindowEnd(now, windowSeconds) },
  };
}

/**
 * Validate again (issue 12 item 8): the stored terms under a new token and window, stored as
 * pending (the old callback stops working), then the request. Undefined when the subscription was
 * deleted meanwhile; `SubscriptionConflictError` when it changed.
 */
export async function validateAgain(
  current: Subscription,
  windowSeconds: number,
  context: TargetValidationContext,
): Promise<Subscription | undefined> {
  const handshake = openHandshake(context.now(), windowSeconds);
  const pending = await context.store.save(
    lifecycle.awaitingValidation(lifecycle.storedTerms(current, context.now()), handshake.fields),
    current,
  );
  return validateTarget(pending, handshake.token, context);
}

/** Sends the validation request and stores what the target said; undefined when the subscription was deleted meanwhile. */
export async function validateTarget(
  pending: Subscription,
  token: string,
  context: TargetValidationContext,
): Promise<Subscription | undefined> {
  const { store, settings, now } = context;
  const callbackUrl = settings.publicBaseUrl
    ? `${settings.publicBaseUrl}/subscriptions/${pending.id}/validation?token=${token}`
    : undefined;
  const outcome = await requestValidation(
    {
      sink: pending.sink,
      origin: settings.webhookOrigin,
      callbackUrl,
      requestedRatePerMinute: settings.requestRatePerMinute,
    },
    context.send,
  );
  let current = pending;
  for (let attempt = 0; ; attempt++) {
    try {
      return await store.save(lifecycle.afterValidation(current, outcome, callbackUrl !== undefined, now()), current);
    } catch (error) {
      if (!(error instanceof SubscriptionConflictError) || attempt > 0) throw error;
      // The target approved through the callback while we were still waiting for its answer.
      const latest = await store.get(pending.id);
      if (!latest || latest.status === 'active' || latest.validationTokenHash !== pending.validationTokenHash)
        return latest;
      current = latest;
    }
  }
}
