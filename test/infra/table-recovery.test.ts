/**
 * Issue 31 item 6 (and issue 35, "Backups"): point-in-time recovery on every table that holds
 * state. Every DynamoDB table in the template is checked, not only those of
 * functions/config/resources.ts, so a table another construct adds is held to it too; none of
 * Koerier's tables is a pure cache (the route index could be rebuilt from the subscriptions, but
 * restoring the two to one point in time keeps them in step: docs/OPERATIONS.md).
 */
import { describe, expect, it } from 'vitest';
import { tables } from '../../functions/config/resources.js';
import { synthKoerier } from './synth.js';

describe('issue 31 item 6: backups of the state tables', () => {
  it('LIVE-6, issue 31 item 6: every table of the stack, and every table holding state by name, has point-in-time recovery and outlives the stack', () => {
    const { resources } = synthKoerier();
    const inTemplate = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table');
    expect(inTemplate.length).toBeGreaterThanOrEqual(Object.keys(tables).length);
    for (const [id, table] of inTemplate) {
      expect(table.Properties.PointInTimeRecoverySpecification, id).toMatchObject({ PointInTimeRecoveryEnabled: true });
      // 35 days, DynamoDB's longest, unless a shorter period is set on purpose.
      expect(table.Properties.PointInTimeRecoverySpecification.RecoveryPeriodInDays ?? 35, id).toBe(35);
      expect(table.DeletionPolicy, id).toBe('Retain');
    }
    for (const name of ['subscriptions', 'partners', 'contracts', 'idempotency', 'routes', 'deliveries'])
      expect(Object.keys(tables), name).toContain(name);
  });
});
