/**
 * Issue 35, disaster recovery options in the stack (docs/DISASTER-RECOVERY.md): nothing changes
 * unless set; `koerier:bucketReplicas` replicates the archive and payload buckets with Replication
 * Time Control; `koerier:globalTableRegions` makes the partners, subscriptions and idempotency
 * tables global tables with a replica there; a wrong value is refused at synth.
 */
import { describe, expect, it } from 'vitest';
import { logicalId, synthKoerier } from './synth.js';

const ARCHIVE_REPLICA = {
  bucket: 'arn:aws:s3:::koerier-standby-archive',
  kmsKey: 'arn:aws:kms:eu-central-1:123456789012:key/0a1b2c3d-1111-2222-3333-444455556666',
};

describe('disaster recovery options (issue 35)', () => {
  it('issue 35 replication options: without them, no bucket is versioned or replicated and no table has replicas', () => {
    const synth = synthKoerier();
    for (const name of ['archive', 'payloads']) {
      const bucket = synth.resources[logicalId(synth.stack, synth.stack.buckets.byName.get(name)!)]!;
      expect(bucket.Properties.ReplicationConfiguration).toBeUndefined();
    }
    expect(Object.values(synth.resources).filter((r) => r.Type === 'Custom::DynamoDBReplica')).toHaveLength(0);
  });

  it('issue 35 replication options: koerier:bucketReplicas replicates the archive with Replication Time Control, KMS-encrypted objects under the replica key, versioned', () => {
    const synth = synthKoerier({ context: { 'koerier:bucketReplicas': { archive: ARCHIVE_REPLICA } } });
    const archive = synth.resources[logicalId(synth.stack, synth.stack.buckets.byName.get('archive')!)]!;
    expect(archive.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    const [rule] = archive.Properties.ReplicationConfiguration.Rules;
    expect(rule).toMatchObject({
      Status: 'Enabled',
      SourceSelectionCriteria: { SseKmsEncryptedObjects: { Status: 'Enabled' } },
      Destination: {
        Bucket: ARCHIVE_REPLICA.bucket,
        EncryptionConfiguration: { ReplicaKmsKeyID: ARCHIVE_REPLICA.kmsKey },
        ReplicationTime: { Status: 'Enabled', Time: { Minutes: 15 } },
        Metrics: { Status: 'Enabled', EventThreshold: { Minutes: 15 } },
      },
    });
    const noncurrent = (
      archive.Properties.LifecycleConfiguration.Rules as { NoncurrentVersionExpiration?: unknown }[]
    ).some((r) => r.NoncurrentVersionExpiration !== undefined);
    expect(noncurrent).toBe(true);
    const payloads = synth.resources[logicalId(synth.stack, synth.stack.buckets.byName.get('payloads')!)]!;
    expect(payloads.Properties.ReplicationConfiguration).toBeUndefined();
  });

  it('issue 35 replication options: koerier:globalTableRegions gives partners, subscriptions (with their routes) and idempotency keys a replica there, and no other table', () => {
    const synth = synthKoerier({ context: { 'koerier:globalTableRegions': ['eu-central-1'] } });
    const replicas = Object.values(synth.resources).filter((r) => r.Type === 'Custom::DynamoDBReplica');
    const tableIds = replicas.map((r) => JSON.stringify(r.Properties.TableName));
    const idOf = (name: string) => logicalId(synth.stack, synth.stack.tables.byName.get(name)!.table);
    // The routes too: the router finds subscribers there, and nothing rebuilds them from the subscriptions.
    for (const name of ['partners', 'subscriptions', 'routes', 'idempotency'])
      expect(tableIds.some((t) => t.includes(idOf(name)))).toBe(true);
    for (const name of ['deliveries', 'contracts']) expect(tableIds.some((t) => t.includes(idOf(name)))).toBe(false);
    expect(replicas.every((r) => r.Properties.Region === 'eu-central-1')).toBe(true);
  });

  it('issue 35 replication options: a bucket that is not replicated, a replica without its key or a Region that is not one are refused', () => {
    expect(() => synthKoerier({ context: { 'koerier:bucketReplicas': { contracts: ARCHIVE_REPLICA } } })).toThrow(
      /not a replicated bucket/,
    );
    expect(() =>
      synthKoerier({ context: { 'koerier:bucketReplicas': { archive: { bucket: ARCHIVE_REPLICA.bucket } } } }),
    ).toThrow(/needs "bucket"/);
    expect(() => synthKoerier({ context: { 'koerier:globalTableRegions': ['frankfurt'] } })).toThrow(/list of Regions/);
  });
});
