/**
 * An active push subscription record as tests and benchmarks store it directly (without the API):
 * the defaults every one of them needs, and only what it cares about given.
 */
import { randomUUID } from 'node:crypto';
import type { SubscriptionDraft } from '../../functions/core/subscriptions/store.js';

export function subscriptionDraft(overrides: Partial<SubscriptionDraft> = {}): SubscriptionDraft {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    owner: 'subscriber',
    sink: 'https://ontvanger.example/hook',
    delivery: 'push',
    contentMode: 'structured',
    batchSupported: false,
    validation: 'agreed',
    status: 'active',
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}
