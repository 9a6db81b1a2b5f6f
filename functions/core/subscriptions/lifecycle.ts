/**
 * The subscription's lifecycle (WH-2, WH-4, WH-5; see `subscription.ts` for the statuses): which
 * status a create, a change, the target's answer to the validation request and an approval
 * through the callback lead to, and whether the target must be asked (again). Pure: every
 * function gets the time it decides on, and nothing here reads a store or sends a request.
 */
import type { ValidationOutcome } from '../webhooks/validation-handshake.js';
import type { SubscriptionDraft } from './store.js';
import { effectiveStatus, type Subscription, type SubscriptionStatus, type ValidationMode } from './subscription.js';

/** What a client asked for, before the lifecycle gives it a status. */
export type SubscriptionTerms = Omit<SubscriptionDraft, 'status'>;

/** The open handshake as stored: the hash of the callback's secret and the end of the approval window. */
export type OpenHandshake = Required<Pick<Subscription, 'validationTokenHash' | 'validationExpiresAt'>>;

export const AGREED_REASON = 'consent agreed out of band (WH-5)';
const SENDING_REASON = 'the validation request is being sent';
/** A pull subscription needs no consent: the consumer asks for its events itself. */
export const PULL_REASON = 'pull delivery: the consumer receives the events itself';

/**
 * Validate again (issue 12 item 8): a subscription under the handshake that is not receiving yet,
 * pending (its target missed the request) or rejected (its target may consent now), with its sink
 * unchanged. Anything else has nothing to ask the target.
 */
export function revalidatable(current: Subscription, now: Date): boolean {
  const status = effectiveStatus(current, now);
  return current.validation === 'handshake' && (status === 'pending' || status === 'rejected');
}

/** What the owner asked for, from the stored subscription: its terms without the outcome of any handshake. */
export function storedTerms(current: Subscription, now: Date): SubscriptionTerms {
  const {
    status: _status,
    statusReason: _reason,
    suspendedFor: _cause,
    allowedRatePerMinute: _rate,
    validationTokenHash: _hash,
    validationExpiresAt: _expires,
    ...terms
  } = withoutStoreFields(current);
  return { ...terms, updatedAt: now.toISOString() };
}

/** When the approval window that opens `now` closes (ISO 8601). */
export function approvalWindowEnd(now: Date, windowSeconds: number): string {
  return new Date(now.getTime() + windowSeconds * 1000).toISOString();
}

/**
 * Stored as pending before the target is asked, so a callback arriving during the OPTIONS
 * request finds the subscription it approves.
 */
export function awaitingValidation(terms: SubscriptionTerms, handshake: OpenHandshake): SubscriptionDraft {
  return { ...terms, ...handshake, status: 'pending', statusReason: SENDING_REASON };
}

export function agreedOnCreate(terms: SubscriptionTerms): SubscriptionDraft {
  if (terms.delivery === 'pull') return { ...terms, status: 'active', statusReason: PULL_REASON };
  return { ...terms, status: 'active', statusReason: AGREED_REASON };
}

/** A new sink, a switch to the handshake, or a subscription not (about to be) receiving: ask the target. */
export function needsHandshake(current: Subscription, sink: string, now: Date): boolean {
  if (sink !== current.sink || current.validation === 'agreed') return true;
  const status = effectiveStatus(current, now);
  return status === 'rejected' || status === 'retired';
}

/**
 * A change (PATCH) of a stored subscription: either the target must be asked (the caller stores
 * `awaitingValidation` and sends the request), or this is the draft to store.
 */
export function afterChange(
  terms: SubscriptionTerms,
  current: Subscription,
  validation: ValidationMode,
  now: Date,
): { readonly handshake: true } | { readonly handshake: false; readonly draft: SubscriptionDraft } {
  // The input was checked to carry an acceptable credential: a subscription suspended for want of
  // one continues from where it was before (active), or through the handshake for a new sink.
  if (terms.delivery === 'pull')
    return {
      handshake: false,
      draft: { ...terms, status: current.status, statusReason: current.statusReason ?? PULL_REASON },
    };
  const reactivating = current.status === 'suspended' && current.suspendedFor === 'credential-required';
  const before = reactivating ? reactivated(current) : current;
  if (validation === 'agreed') {
    const next = agreedStatus(terms, before);
    return {
      handshake: false,
      draft: reactivating && next.status === 'active' ? { ...next, statusReason: before.statusReason! } : next,
    };
  }
  if (needsHandshake(before, terms.sink, now)) return { handshake: true };
  return { handshake: false, draft: keepHandshakeState(terms, before) };
}

/**
 * A subscription suspended for want of a credential, as it was before: active. What was parked
 * meanwhile stays with the dead letters until the owner redrives it (the subscriptions function
 * has no access to the deliveries; a redrive re-checks entitlement and filters anyway).
 */
export function reactivated(current: Subscription): Subscription {
  const { suspendedFor: _cause, ...rest } = current;
  return {
    ...rest,
    status: 'active',
    statusReason: `a sink credential was set and deliveries resume; send what was held meanwhile with POST /subscriptions/${current.id}/dead-letters/redrive`,
  };
}

/** With the handshake done earlier and the sink unchanged, the target's answers still hold. */
export function keepHandshakeState(terms: SubscriptionTerms, current: Subscription): SubscriptionDraft {
  return {
    ...terms,
    status: current.status,
    batchSupported: current.batchSupported,
    ...(current.statusReason === undefined ? {} : { statusReason: current.statusReason }),
    ...(current.suspendedFor === undefined ? {} : { suspendedFor: current.suspendedFor }),
    ...(current.allowedRatePerMinute === undefined ? {} : { allowedRatePerMinute: current.allowedRatePerMinute }),
    ...(current.validationTokenHash === undefined ? {} : { validationTokenHash: current.validationTokenHash }),
    ...(current.validationExpiresAt === undefined ? {} : { validationExpiresAt: current.validationExpiresAt }),
  };
}

/**
 * Agreed out of band: active, unless the delivery function has suspended it, or retired it because
 * the target answered 410 Gone (WH-2) — final for that sink, so only another sink revives it.
 */
export function agreedStatus(terms: SubscriptionTerms, current: Subscription): SubscriptionDraft {
  if (current.status === 'suspended' || (current.status === 'retired' && terms.sink === current.sink)) {
    return {
      ...terms,
      status: current.status,
      ...(current.statusReason ? { statusReason: current.statusReason } : {}),
      ...(current.suspendedFor ? { suspendedFor: current.suspendedFor } : {}),
    };
  }
  return { ...terms, status: 'active', statusReason: AGREED_REASON };
}

/** What the target's answer to the validation request makes of a pending subscription. */
export function afterValidation(
  current: Subscription,
  outcome: ValidationOutcome,
  callbackOffered: boolean,
  now: Date,
): SubscriptionDraft {
  const { statusReason: _reason, allowedRatePerMinute: _rate, ...rest } = withoutStoreFields(current);
  const base = { ...rest, updatedAt: now.toISOString() };
  const window = current.validationExpiresAt;
  switch (outcome.verdict) {
    case 'consented':
      return {
        ...base,
        status: 'active',
        statusReason: outcome.reason,
        batchSupported: outcome.batchSupported,
        ...(outcome.allowedRatePerMinute === undefined ? {} : { allowedRatePerMinute: outcome.allowedRatePerMinute }),
      };
    case 'refused':
      return {
        ...base,
        status: 'rejected',
        statusReason: `${outcome.reason}${callbackOffered ? `; it can still be approved through the callback until ${window}` : ''}`,
      };
    case 'undecided':
      return callbackOffered
        ? {
            ...base,
            status: 'pending',
            statusReason: `${outcome.reason}; waiting for approval through the callback until ${window}`,
          }
        : {
            ...base,
            status: 'rejected',
            statusReason: `${outcome.reason}; no callback is offered, so there is no consent`,
          };
  }
}

export type ApprovalDecision =
  | { readonly kind: 'approve' }
  /** Repeating an approval is harmless. */
  | { readonly kind: 'already-active' }
  | { readonly kind: 'not-approvable'; readonly status: SubscriptionStatus }
  | { readonly kind: 'window-closed' };

/**
 * An approval through the callback (the token already checked): a pending or rejected
 * subscription may be approved while its window is open (spec 4.1.3: also by an administrator,
 * by hand, for a target that does not support the handshake).
 */
export function approvalDecision(
  current: Pick<Subscription, 'status' | 'validationExpiresAt'>,
  now: Date,
): ApprovalDecision {
  if (current.status === 'active') return { kind: 'already-active' };
  if (current.status !== 'pending' && current.status !== 'rejected')
    return { kind: 'not-approvable', status: current.status };
  if (current.validationExpiresAt && Date.parse(current.validationExpiresAt) < now.getTime())
    return { kind: 'window-closed' };
  return { kind: 'approve' };
}

/** The subscription once approved through the callback, at the rate the target allowed (WH-6). */
export function approvedByCallback(
  current: Subscription,
  allowedRatePerMinute: number | undefined,
  now: Date,
): SubscriptionDraft {
  const { statusReason: _reason, allowedRatePerMinute: _rate, ...rest } = withoutStoreFields(current);
  return {
    ...rest,
    status: 'active',
    statusReason: 'the target approved through the validation callback',
    ...(allowedRatePerMinute === undefined ? {} : { allowedRatePerMinute }),
    updatedAt: now.toISOString(),
  };
}

export function withoutStoreFields(s: Subscription): SubscriptionDraft {
  const { routeKeys: _keys, version: _version, ...draft } = s;
  return draft;
}
