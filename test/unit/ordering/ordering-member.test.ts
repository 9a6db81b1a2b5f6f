/**
 * Issue 33 item 1 (ORD-1): the `ordering` member of a subscription — checked, defaulted, kept by
 * the store's item format, shown, and refused where the deployment does not deliver in order.
 */
import { describe, expect, it } from 'vitest';
import { itemOf, subscriptionOf } from '../../../functions/aws/subscription-table-items.js';
import { parseSubscriptionInput, type InputRules } from '../../../functions/core/subscriptions/subscription-input.js';
import { view, writableView } from '../../../functions/core/subscriptions/subscription-view.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import { awsInputRules } from '../subscriptions/subscription-fixtures.js';

const ordered: InputRules = { ...awsInputRules, orderingAvailable: true };
const sink = 'https://ontvanger.example/webhook';
const issuesOf = (body: Record<string, unknown>, rules = ordered) =>
  parseSubscriptionInput(body, rules).issues.map((i) => `${i.attribute}:${i.rule}:${i.requirement}`);

describe('the ordering member (issue 33 item 1)', () => {
  it('ORD-1: an empty ordering object orders by partitionkey, delivers keyless events unordered and blocks on failure', () => {
    expect(parseSubscriptionInput({ sink, ordering: {} }, ordered).input?.ordering).toEqual({
      key: 'partitionkey',
      withoutKey: 'unordered',
      onFailure: 'block',
    });
    expect(
      parseSubscriptionInput(
        { sink, ordering: { key: 'leerlingnummer', withoutKey: 'refuse', onFailure: 'park' } },
        ordered,
      ).input?.ordering,
    ).toEqual({ key: 'leerlingnummer', withoutKey: 'refuse', onFailure: 'park' });
    expect(parseSubscriptionInput({ sink }, ordered).input).not.toHaveProperty('ordering');
  });

  it('ORD-1: a key that is no attribute name, an unknown policy or an unknown member is refused as ordering', () => {
    for (const ordering of [
      { key: 'Partition-Key' },
      { key: '' },
      { key: 'a'.repeat(21) },
      { onFailure: 'retry' },
      { withoutKey: 'drop' },
      { key: 'subject', order: 'asc' },
      'partitionkey',
      [],
    ])
      expect(issuesOf({ sink, ordering }), JSON.stringify(ordering)).toEqual(['ordering:ordering:ORD-1']);
  });

  it('ORD-1: an attribute that says nothing about which thing the event is about cannot be the key; sequence neither', () => {
    for (const key of ['id', 'source', 'type', 'time', 'specversion', 'sequence'])
      expect(issuesOf({ sink, ordering: { key } }), key).toEqual(['ordering:not-a-key:ORD-1']);
    for (const key of ['partitionkey', 'subject', 'zaaknummer'])
      expect(issuesOf({ sink, ordering: { key } })).toEqual([]);
  });

  it('ORD-1: a deployment that does not deliver in order refuses ordering instead of ignoring it', () => {
    expect(issuesOf({ sink, ordering: {} }, awsInputRules)).toEqual(['ordering:ordering-unavailable:ORD-1']);
    expect(issuesOf({ delivery: 'pull', ordering: {} }, awsInputRules)).toEqual([
      'ordering:ordering-unavailable:ORD-1',
    ]);
    expect(issuesOf({ sink }, awsInputRules)).toEqual([]);
  });

  it('ORD-5: a pull subscription may ask for ordering (issue 33 item "Pull"), with the same members and defaults', () => {
    expect(issuesOf({ delivery: 'pull', ordering: {} })).toEqual([]);
    expect(issuesOf({ delivery: 'pull', ordering: { key: 'zaaknummer', onFailure: 'skip' } })).toEqual([]);
    expect(issuesOf({ delivery: 'pull', ordering: { key: 'id' } })).toEqual(['ordering:not-a-key:ORD-1']);
  });

  it('ORD-1: the store keeps it, the view shows it (push and pull), and a PATCH merges into it', () => {
    const settings = { key: 'subject', withoutKey: 'unordered', onFailure: 'skip' } as const;
    const subscription: Subscription = {
      id: '7f1c0a4e-2d3b-4c5d-8e6f-0a1b2c3d4e5f',
      owner: 'school-a',
      sink,
      delivery: 'push',
      contentMode: 'structured',
      batchSupported: false,
      validation: 'agreed',
      status: 'active',
      routeKeys: [],
      ordering: settings,
      createdAt: '2026-11-29T12:00:00.000Z',
      updatedAt: '2026-11-29T12:00:00.000Z',
      version: 1,
    };
    expect(subscriptionOf(itemOf(subscription)).ordering).toEqual(settings);
    const { ordering: _none, ...unordered } = subscription;
    expect(subscriptionOf(itemOf(unordered))).not.toHaveProperty('ordering');
    expect(view(subscription, new Date())['ordering']).toEqual(settings);
    expect(view({ ...subscription, delivery: 'pull', sink: '' }, new Date())['ordering']).toEqual(settings);
    expect(writableView(subscription)['ordering']).toEqual(settings);
  });
});
