/**
 * Issue 33, the lane sweeper (ORD-8, docs/ORDERING.md "Sweeper"): the scheduled function and the
 * deliveries table's sparse index it reads, as the template deploys them. The laptop creates the
 * same index from the same description (local/emulators.ts; test/integration/lane-sweep-dynamodb.test.ts).
 */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { synthKoerier, referencedIds } from './synth.js';

describe('the lane sweeper in the template (issue 33)', () => {
  it('ORD-8: an EventBridge rule runs the lane sweeper every 5 minutes, and the deliveries table has the sparse laneSweep index carrying only the key', () => {
    const { template, resources } = synthKoerier();
    const rules = template.findResources('AWS::Events::Rule', {
      Properties: { ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' },
    });
    expect(Object.keys(rules)).toHaveLength(1);
    const [rule] = Object.values(rules) as { Properties: { Targets: unknown[] } }[];
    const targets = referencedIds(rule!.Properties.Targets);
    const sweeper = Object.entries(resources).find(
      ([id, resource]) => resource.Type === 'AWS::Lambda::Function' && id.startsWith('laneSweeper'),
    );
    expect(sweeper).toBeDefined();
    expect(targets).toContain(sweeper![0]);
    // EventBridge may invoke it.
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Principal: 'events.amazonaws.com',
      FunctionName: Match.objectLike({ 'Fn::GetAtt': [sweeper![0], 'Arn'] }),
    });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: Match.arrayWith([
        {
          IndexName: 'laneSweep',
          KeySchema: [
            { AttributeName: 'sweepShard', KeyType: 'HASH' },
            { AttributeName: 'sweepSince', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['key'] },
        },
      ]),
    });
  });
});
