/**
 * The subscription lifecycle as tables: pure functions, the time given to each, no store.
 */
import { describe, expect, it } from 'vitest';
import {
  approvalTokenMatches,
  hashApprovalToken,
  newApprovalToken,
} from '../../../functions/core/subscriptions/approval-token.js';
import {
  afterChange,
  afterValidation,
  approvalDecision,
  approvalWindowEnd,
  approvedByCallback,
  needsHandshake,
  type SubscriptionTerms,
} from '../../../functions/core/subscriptions/lifecycle.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import type { ValidationOutcome } from '../../../functions/core/webhooks/validation-handshake.js';

const NOW = new Date(Date.UTC(2026, 2, 1, 12));
const LATER = new Date(NOW.getTime() + 2 * 3600_000);
const SINK = 'https://ontvanger.example/hook';
const OPEN_UNTIL = new Date(NOW.getTime() + 3600_000).toISOString();

function stored(overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: 'sub-1',
    owner: 'school-a',
    sink: SINK,
    delivery: 'push',
    contentMode: 'structured',
    batchSupported: false,
    validation: 'handshake',
    status: 'active',
    statusReason: 'the target consented',
    routeKeys: ['eq:type=x'],
    createdAt: NOW.toISOString(),
    updatedAt: NOW.toISOString(),
    version: 4,
    ...overrides,
  };
}

function termsOf(s: Subscription, overrides: Partial<SubscriptionTerms> = {}): SubscriptionTerms {
  const {
    routeKeys: _k,
    version: _v,
    status: _s,
    statusReason: _r,
    suspendedFor: _c,
    allowedRatePerMinute: _a,
    validationTokenHash: _h,
    validationExpiresAt: _e,
    ...terms
  } = s;
  return { ...terms, ...overrides };
}

describe('subscription lifecycle: when the target is asked', () => {
  it.each([
    ['WH-4: an active subscription, same sink', stored(), SINK, NOW, false],
    ['WH-4: an active subscription, another sink', stored(), 'https://elders.example/hook', NOW, true],
    ['WH-4: a rejected subscription, same sink', stored({ status: 'rejected' }), SINK, NOW, true],
    ['WH-2: a retired subscription, same sink', stored({ status: 'retired' }), SINK, NOW, true],
    [
      'WH-4: a pending one within its window',
      stored({ status: 'pending', validationExpiresAt: OPEN_UNTIL }),
      SINK,
      NOW,
      false,
    ],
    [
      'WH-4: a pending one after its window (counts as rejected)',
      stored({ status: 'pending', validationExpiresAt: OPEN_UNTIL }),
      SINK,
      LATER,
      true,
    ],
    [
      'WH-4: a suspended one, same sink',
      stored({ status: 'suspended', suspendedFor: 'target-failing' }),
      SINK,
      NOW,
      false,
    ],
    ['WH-5: one agreed out of band that switches to the handshake', stored({ validation: 'agreed' }), SINK, NOW, true],
  ])('%s: asked again = %s', (_case, current, sink, now, expected) => {
    expect(needsHandshake(current, sink, now)).toBe(expected);
  });
});

describe("subscription lifecycle: what the target's answer makes of a pending subscription", () => {
  const pending = stored({
    status: 'pending',
    statusReason: 'the validation request is being sent',
    validationTokenHash: 'h',
    validationExpiresAt: OPEN_UNTIL,
    allowedRatePerMinute: 5,
  });
  it.each<[string, ValidationOutcome, boolean, Partial<Subscription>, RegExp]>([
    [
      'WH-4: consent',
      { verdict: 'consented', allowedRatePerMinute: 120, batchSupported: true, reason: 'the target consented' },
      true,
      { status: 'active', allowedRatePerMinute: 120, batchSupported: true },
      /^the target consented$/,
    ],
    [
      'WH-6: consent without a rate limit',
      { verdict: 'consented', batchSupported: false, reason: 'the target consented' },
      true,
      { status: 'active', batchSupported: false },
      /^the target consented$/,
    ],
    [
      'WH-4: a refusal with a callback',
      { verdict: 'refused', reason: 'no' },
      true,
      { status: 'rejected' },
      new RegExp(`^no; it can still be approved through the callback until ${OPEN_UNTIL}$`),
    ],
    ['WH-5: a refusal without a callback', { verdict: 'refused', reason: 'no' }, false, { status: 'rejected' }, /^no$/],
    [
      'WH-4: undecided with a callback',
      { verdict: 'undecided', reason: 'silence' },
      true,
      { status: 'pending' },
      new RegExp(`^silence; waiting for approval through the callback until ${OPEN_UNTIL}$`),
    ],
    [
      'WH-4: undecided without a callback',
      { verdict: 'undecided', reason: 'silence' },
      false,
      { status: 'rejected' },
      /^silence; no callback is offered, so there is no consent$/,
    ],
  ])('%s', (_case, outcome, callbackOffered, expected, reason) => {
    const next = afterValidation(pending, outcome, callbackOffered, LATER);
    expect(next).toMatchObject({ ...expected, updatedAt: LATER.toISOString(), validationTokenHash: 'h' });
    expect(next.statusReason).toMatch(reason);
    if (expected.allowedRatePerMinute === undefined) expect(next).not.toHaveProperty('allowedRatePerMinute');
    expect(next).not.toHaveProperty('routeKeys');
    expect(next).not.toHaveProperty('version');
  });
});

describe('subscription lifecycle: a change', () => {
  const credentialRequired = stored({
    status: 'suspended',
    suspendedFor: 'credential-required',
    statusReason: 'no credential',
  });
  const failing = stored({
    status: 'suspended',
    suspendedFor: 'target-failing',
    statusReason: 'keeps failing',
    validation: 'agreed',
  });
  const retired = stored({ status: 'retired', statusReason: 'the target answered 410 Gone', validation: 'agreed' });
  const elsewhere = 'https://elders.example/hook';
  it.each<[string, Subscription, Partial<SubscriptionTerms>, 'handshake' | 'agreed', 'ask' | Partial<Subscription>]>([
    [
      'WH-4: same sink, handshake done: status and answers kept',
      stored({ allowedRatePerMinute: 120 }),
      {},
      'handshake',
      { status: 'active', allowedRatePerMinute: 120, statusReason: 'the target consented' },
    ],
    ['WH-4: another sink: the target is asked', stored(), { sink: elsewhere }, 'handshake', 'ask'],
    ['WH-4: rejected: the target is asked again', stored({ status: 'rejected' }), {}, 'handshake', 'ask'],
    [
      'WH-5: agreed: active at once',
      stored({ status: 'rejected' }),
      { validation: 'agreed' },
      'agreed',
      { status: 'active', statusReason: 'consent agreed out of band (WH-5)' },
    ],
    [
      'WH-5: agreed, suspended for a failing target: stays suspended',
      failing,
      {},
      'agreed',
      { status: 'suspended', suspendedFor: 'target-failing', statusReason: 'keeps failing' },
    ],
    ['WH-2: agreed, retired, same sink: stays retired', retired, {}, 'agreed', { status: 'retired' }],
    [
      'WH-2: agreed, retired, another sink: active',
      retired,
      { sink: elsewhere },
      'agreed',
      { status: 'active', statusReason: 'consent agreed out of band (WH-5)' },
    ],
    [
      'WH-3: suspended for want of a credential, agreed: active again, told to redrive',
      { ...credentialRequired, validation: 'agreed' },
      {},
      'agreed',
      {
        status: 'active',
        statusReason: expect.stringContaining('/subscriptions/sub-1/dead-letters/redrive') as string,
      },
    ],
    [
      'WH-3: suspended for want of a credential, same sink: active again, without asking',
      credentialRequired,
      {},
      'handshake',
      { status: 'active', statusReason: expect.stringContaining('deliveries resume') as string },
    ],
    [
      'WH-3: suspended for want of a credential, another sink: the target is asked',
      credentialRequired,
      { sink: elsewhere },
      'handshake',
      'ask',
    ],
  ])('%s', (_case, current, change, validation, expected) => {
    const next = afterChange(
      termsOf(current, { ...change, validation: change.validation ?? current.validation }),
      current,
      validation,
      NOW,
    );
    if (expected === 'ask') {
      expect(next).toEqual({ handshake: true });
      return;
    }
    expect(next.handshake).toBe(false);
    if (next.handshake) return;
    expect(next.draft).toMatchObject(expected);
    if (expected.suspendedFor === undefined) expect(next.draft).not.toHaveProperty('suspendedFor');
  });
});

describe('subscription lifecycle: the approval window and the callback', () => {
  it('WH-4: the window closes the configured number of seconds after it opens', () => {
    expect(approvalWindowEnd(NOW, 3600)).toBe(OPEN_UNTIL);
  });

  it.each([
    ['pending, window open', stored({ status: 'pending', validationExpiresAt: OPEN_UNTIL }), NOW, { kind: 'approve' }],
    [
      'rejected, window open (spec 4.1.3: approval by hand)',
      stored({ status: 'rejected', validationExpiresAt: OPEN_UNTIL }),
      NOW,
      { kind: 'approve' },
    ],
    [
      'pending, window closed',
      stored({ status: 'pending', validationExpiresAt: OPEN_UNTIL }),
      LATER,
      { kind: 'window-closed' },
    ],
    ['active: repeating is harmless', stored({ validationExpiresAt: OPEN_UNTIL }), LATER, { kind: 'already-active' }],
    ['retired', stored({ status: 'retired' }), NOW, { kind: 'not-approvable', status: 'retired' }],
    ['suspended', stored({ status: 'suspended' }), NOW, { kind: 'not-approvable', status: 'suspended' }],
  ])('WH-4: %s', (_case, current, now, expected) => {
    expect(approvalDecision(current, now)).toEqual(expected);
  });

  it('WH-6: an approval makes the subscription active at the rate the callback allows, or without a limit', () => {
    const pending = stored({ status: 'pending', allowedRatePerMinute: 5, validationExpiresAt: OPEN_UNTIL });
    expect(approvedByCallback(pending, 30, LATER)).toMatchObject({
      status: 'active',
      allowedRatePerMinute: 30,
      updatedAt: LATER.toISOString(),
      statusReason: 'the target approved through the validation callback',
    });
    expect(approvedByCallback(pending, undefined, LATER)).not.toHaveProperty('allowedRatePerMinute');
  });

  it('WH-4: only the hash of the callback token is kept, and only the token itself matches it', () => {
    const { token, hash } = newApprovalToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain(token);
    expect(hash).toBe(hashApprovalToken(token));
    expect(approvalTokenMatches(token, hash)).toBe(true);
    expect(approvalTokenMatches(`${token}x`, hash)).toBe(false);
    expect(approvalTokenMatches('', hash)).toBe(false);
    expect(newApprovalToken().token).not.toBe(token);
  });
});
