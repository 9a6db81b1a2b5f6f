/**
 * The bodies of the pull routes (docs/PULL.md), one schema each (core/http/json-body.ts): a
 * receive's wait, lock and count, a settle's lock tokens and its action's own member. Unknown
 * members are refused, as in the subscriptions API, so a typo never silently takes a default.
 */
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (json-body.ts says why).
import * as Type from '@sinclair/typebox';
import type { TProperties } from '@sinclair/typebox';
import { readJsonBody, requestBody, type RequestBody } from '../http/json-body.js';

export const RECEIVE_LIMITS = {
  maxevents: { min: 1, max: 100, default: 10 },
  waitseconds: { min: 0, max: 20, default: 20 },
  lockseconds: { min: 10, max: 43_200, default: 60 },
} as const;

export const SETTLE_LIMITS = {
  locktokens: { min: 1, max: 100 },
  delayseconds: { min: 0, max: 43_200, default: 0 },
  lockseconds: RECEIVE_LIMITS.lockseconds,
  reason: { maxLength: 1024 },
} as const;

export type SettleAction = 'acknowledge' | 'release' | 'renew-lock' | 'reject';

export interface ReceiveRequest {
  readonly maxEvents: number;
  readonly waitSeconds: number;
  readonly lockSeconds: number;
}

export interface SettleRequest {
  readonly lockTokens: readonly string[];
  /** release */
  readonly delaySeconds: number;
  /** renew-lock */
  readonly lockSeconds: number;
  /** reject */
  readonly reason: string;
}

/** A range member's schema, its limits and default the ones above. */
function range(limits: { readonly min: number; readonly max: number; readonly default: number }, description: string) {
  return Type.Integer({ minimum: limits.min, maximum: limits.max, default: limits.default, description });
}

export const RECEIVE_BODY = requestBody({
  schema: Type.Object(
    {
      maxevents: Type.Optional(range(RECEIVE_LIMITS.maxevents, 'At most this many events.')),
      waitseconds: Type.Optional(range(RECEIVE_LIMITS.waitseconds, 'How long to wait when nothing is there.')),
      lockseconds: Type.Optional(range(RECEIVE_LIMITS.lockseconds, 'How long the events stay locked to this receive.')),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-pull-request',
  requirement: 'EDU-17',
  whenEmpty: {},
});

const lockTokens = Type.Array(Type.String({ minLength: 1 }), {
  minItems: SETTLE_LIMITS.locktokens.min,
  maxItems: SETTLE_LIMITS.locktokens.max,
});

function settleBody<P extends TProperties>(own: P) {
  return requestBody({
    schema: Type.Object({ locktokens: lockTokens, ...own }, { additionalProperties: false }),
    problemType: 'invalid-pull-request',
    requirement: 'EDU-17',
  });
}

/** The body of each settle action: the lock tokens, and the action's own member. */
export const SETTLE_BODIES = {
  acknowledge: settleBody({}),
  release: settleBody({
    delayseconds: Type.Optional(range(SETTLE_LIMITS.delayseconds, 'Seconds until the events are handed out again.')),
  }),
  'renew-lock': settleBody({
    lockseconds: Type.Optional(range(SETTLE_LIMITS.lockseconds, 'The new lock, from now.')),
  }),
  reject: settleBody({ reason: Type.Optional(Type.String({ maxLength: SETTLE_LIMITS.reason.maxLength })) }),
} as const satisfies Record<SettleAction, RequestBody>;

/** Throws the 400 (a `KoerierError`) naming every wrong member. */
export function parseReceiveRequest(body: Buffer): ReceiveRequest {
  const fields = readJsonBody(body, RECEIVE_BODY);
  return {
    maxEvents: fields.maxevents ?? RECEIVE_LIMITS.maxevents.default,
    waitSeconds: fields.waitseconds ?? RECEIVE_LIMITS.waitseconds.default,
    lockSeconds: fields.lockseconds ?? RECEIVE_LIMITS.lockseconds.default,
  };
}

/** Throws the 400 (a `KoerierError`) naming every wrong member. */
export function parseSettleRequest(body: Buffer, action: SettleAction): SettleRequest {
  const fields: { locktokens: string[]; delayseconds?: number; lockseconds?: number; reason?: string } = readJsonBody(
    body,
    SETTLE_BODIES[action],
  );
  return {
    lockTokens: fields.locktokens,
    delaySeconds: fields.delayseconds ?? (action === 'release' ? SETTLE_LIMITS.delayseconds.default : 0),
    lockSeconds: fields.lockseconds ?? (action === 'renew-lock' ? SETTLE_LIMITS.lockseconds.default : 0),
    reason: fields.reason ?? '',
  };
}
