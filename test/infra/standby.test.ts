/**
 * Issue 35, the standby stack in a second Region that can take over the API name
 * (lib/standby-config.ts, lib/constructs/failover.ts, docs/DISASTER-RECOVERY.md): a standby uses
 * the primary's global-table replicas by name, a replica of its multi-Region credentials key and
 * its own versioned buckets as replication destinations; Route 53 failover records move the API
 * name; the idempotency table can be strongly consistent. Wrong settings are refused at synth.
 */
import { describe, expect, it } from 'vitest';
import { unacknowledgedFindings, unjustifiedAcknowledgements } from './cdk-nag-review.js';
import { logicalId, referencedIds, type CfnResourceJson } from './synth.js';
import { synthInRegion, TEST_ACCOUNT, type RegionalSynth } from './synth-in-region.js';

const PRIMARY_REGION = 'eu-west-1';
const STANDBY_REGION = 'eu-central-1';
const HOST = 'koerier.gemeente.example';
const certificateIn = (region: string) =>
  `arn:aws:acm:${region}:${TEST_ACCOUNT}:certificate/0a1b2c3d-1111-2222-3333-444455556666`;
const PRIMARY_KEY = `arn:aws:kms:${PRIMARY_REGION}:${TEST_ACCOUNT}:key/mrk-0123456789abcdef0123456789abcdef`;
const ZONE = 'Z0123456789ABCDEFGHIJ';
const REPLICA_NAMES = {
  partners: 'Koerier-TablespartnersA1B2C3-1ABCDEFGHIJK',
  subscriptions: 'Koerier-TablessubscriptionsD4E5F6-2ABCDEFGHIJK',
  routes: 'Koerier-TablesroutesG7H8I9-3ABCDEFGHIJK',
  idempotency: 'Koerier-TablesidempotencyJ1K2L3-4ABCDEFGHIJK',
};

const primaryContext = (extra: Record<string, unknown> = {}) => ({
  'koerier:publicDomain': HOST,
  'koerier:publicCertificateArn': certificateIn(PRIMARY_REGION),
  'koerier:globalTableRegions': [STANDBY_REGION],
  'koerier:multiRegionKeys': true,
  ...extra,
});
const standbyContext = (extra: Record<string, unknown> = {}) => ({
  'koerier:stackName': 'Koerier-Standby',
  'koerier:publicDomain': HOST,
  'koerier:publicCertificateArn': certificateIn(STANDBY_REGION),
  'koerier:standby': { primaryRegion: PRIMARY_REGION, tables: REPLICA_NAMES, credentialsKey: PRIMARY_KEY },
  ...extra,
});

const ofType = (synth: RegionalSynth, type: string) =>
  Object.entries(synth.template.Resources).filter(([, resource]) => resource.Type === type);
const functionsOf = (synth: RegionalSynth) => ofType(synth, 'AWS::Lambda::Function').map(([, fn]) => fn);
const policyStatements = (synth: RegionalSynth) =>
  ofType(synth, 'AWS::IAM::Policy').flatMap(
    ([, policy]) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[],
  );

describe('the standby stack (issue 35)', () => {
  it('DR-2: a standby makes no partners, subscriptions, routes or idempotency table: its functions use the replicas by name', () => {
    const synth = synthInRegion(STANDBY_REGION, standbyContext());
    const tables = ofType(synth, 'AWS::DynamoDB::Table').map(([id]) => id);
    for (const name of Object.keys(REPLICA_NAMES)) expect(tables.some((id) => id.includes(name))).toBe(false);
    for (const name of ['deliveries', 'contracts']) expect(tables.some((id) => id.includes(name))).toBe(true);
    const environments = functionsOf(synth).map((fn) => JSON.stringify(fn.Properties.Environment?.Variables ?? {}));
    for (const name of Object.values(REPLICA_NAMES)) expect(environments.some((env) => env.includes(name))).toBe(true);
    // The grants name the replica in the standby's own Region.
    const granted = JSON.stringify(policyStatements(synth).map((statement) => statement.Resource));
    expect(granted).toContain(`:dynamodb:${STANDBY_REGION}:${TEST_ACCOUNT}:table/${REPLICA_NAMES.subscriptions}`);
    expect(granted).toContain(`table/${REPLICA_NAMES.subscriptions}/index/byOwner`);
  });

  it('DR-2: a standby versions its archive and payload buckets, the replication destinations, and hands out their ARNs and keys for the primary', () => {
    const synth = synthInRegion(STANDBY_REGION, standbyContext());
    const outputs = synth.template.Outputs ?? {};
    for (const name of ['archive', 'payloads']) {
      const bucket = synth.stack.buckets.byName.get(name)!;
      const id = logicalId(synth.stack, bucket);
      expect(synth.template.Resources[id]!.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
      expect(referencedIds(outputs[`${name}ReplicaBucketArn`].Value)).toEqual([id]);
      expect(referencedIds(outputs[`${name}ReplicaKmsKeyArn`].Value)).toEqual([
        logicalId(synth.stack, bucket.encryptionKey!),
      ]);
    }
    const contracts = logicalId(synth.stack, synth.stack.buckets.byName.get('contracts')!);
    expect(synth.template.Resources[contracts]!.Properties.VersioningConfiguration).toBeUndefined();
  });

  it('DR-3: with koerier:apiHostedZoneId the primary gets the PRIMARY failover alias record of the API name, health-checked on its own API', () => {
    const synth = synthInRegion(PRIMARY_REGION, primaryContext({ 'koerier:apiHostedZoneId': ZONE }));
    const [[, record]] = ofType(synth, 'AWS::Route53::RecordSet') as [[string, CfnResourceJson]];
    const [[checkId, check]] = ofType(synth, 'AWS::Route53::HealthCheck') as [[string, CfnResourceJson]];
    const domainId = logicalId(synth.stack, synth.stack.publicDomain!.domainName);
    expect(record.Properties).toMatchObject({ HostedZoneId: ZONE, Name: HOST, Type: 'A', Failover: 'PRIMARY' });
    expect(referencedIds(record.Properties.HealthCheckId)).toEqual([checkId]);
    expect(referencedIds(record.Properties.AliasTarget)).toEqual([domainId, domainId]);
    expect(check.Properties.HealthCheckConfig).toMatchObject({
      Type: 'HTTPS',
      Port: 443,
      ResourcePath: '/v1/openapi.json',
      RequestInterval: 30,
      FailureThreshold: 3,
    });
    // The execute-api host, not the public name (which would follow the failover to the standby).
    const host = JSON.stringify(check.Properties.HealthCheckConfig.FullyQualifiedDomainName);
    expect(host).toContain(logicalId(synth.stack, synth.stack.httpApi.api));
    expect(host).toContain('execute-api');
    expect(host).not.toContain(HOST);
  });

  it('DR-3: a standby with koerier:apiHostedZoneId gets the SECONDARY record on its own custom domain; without a zone neither stack makes a record', () => {
    const synth = synthInRegion(STANDBY_REGION, standbyContext({ 'koerier:apiHostedZoneId': ZONE }));
    const [[, record]] = ofType(synth, 'AWS::Route53::RecordSet') as [[string, CfnResourceJson]];
    expect(record.Properties).toMatchObject({ Name: HOST, Failover: 'SECONDARY', HostedZoneId: ZONE });
    expect(record.Properties.HealthCheckId).toBeUndefined();
    expect(referencedIds(record.Properties.AliasTarget)[0]).toBe(
      logicalId(synth.stack, synth.stack.publicDomain!.domainName),
    );
    expect(ofType(synth, 'AWS::Route53::HealthCheck')).toHaveLength(0);
    const domain = synth.template.Resources[logicalId(synth.stack, synth.stack.publicDomain!.domainName)]!;
    expect(JSON.stringify(domain.Properties)).toContain(certificateIn(STANDBY_REGION));
    for (const unzoned of [
      synthInRegion(STANDBY_REGION, standbyContext()),
      synthInRegion(PRIMARY_REGION, primaryContext()),
    ])
      expect(ofType(unzoned, 'AWS::Route53::RecordSet')).toHaveLength(0);
  });

  it('DR-4: koerier:multiRegionKeys makes the credentials key a multi-Region primary key (and only it); the standby holds a replica and its functions use that', () => {
    const primary = synthInRegion(PRIMARY_REGION, primaryContext());
    const credentials = logicalId(primary.stack, primary.stack.keys.byName.get('credentials')!);
    expect(primary.template.Resources[credentials]!.Properties.MultiRegion).toBe(true);
    const lockTokens = logicalId(primary.stack, primary.stack.keys.byName.get('lockTokens')!);
    expect(primary.template.Resources[lockTokens]!.Properties.MultiRegion).toBeUndefined();
    expect(referencedIds(primary.template.Outputs!['CredentialsKeyArn'].Value)).toEqual([credentials]);

    const standby = synthInRegion(STANDBY_REGION, standbyContext());
    const [[replicaId, replica]] = ofType(standby, 'AWS::KMS::ReplicaKey') as [[string, CfnResourceJson]];
    expect(replica.Properties.PrimaryKeyArn).toBe(PRIMARY_KEY);
    expect(replica.DeletionPolicy).toBe('Retain');
    const keyGrants = policyStatements(standby).filter((s) => [s.Action].flat().includes('kms:Decrypt'));
    expect(keyGrants.some((s) => referencedIds(s.Resource).includes(replicaId))).toBe(true);
    const credentialsEnv = functionsOf(standby).map((fn) => fn.Properties.Environment?.Variables ?? {});
    expect(
      credentialsEnv.some((env) => Object.values(env).some((value) => referencedIds(value).includes(replicaId))),
    ).toBe(true);
  });

  it("DR-4: S3 replication of the KMS-encrypted archive selects SSE-KMS objects, re-encrypts them under the standby bucket's key, and its role may decrypt only the source key and encrypt only with the replica key", () => {
    const replicaKey = `arn:aws:kms:${STANDBY_REGION}:${TEST_ACCOUNT}:key/0a1b2c3d-1111-2222-3333-444455556666`;
    const synth = synthInRegion(
      PRIMARY_REGION,
      primaryContext({
        'koerier:bucketReplicas': { archive: { bucket: 'arn:aws:s3:::standby-archive', kmsKey: replicaKey } },
      }),
    );
    const archive = synth.stack.buckets.byName.get('archive')!;
    const [rule] = synth.template.Resources[logicalId(synth.stack, archive)]!.Properties.ReplicationConfiguration.Rules;
    expect(rule.SourceSelectionCriteria).toEqual({ SseKmsEncryptedObjects: { Status: 'Enabled' } });
    expect(rule.Destination.EncryptionConfiguration).toEqual({ ReplicaKmsKeyID: replicaKey });
    const role = ofType(synth, 'AWS::IAM::Policy').find(([id]) => id.includes('archiveReplicationRole'))![1];
    const statements = role.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[];
    const kmsStatements = statements.filter((s) => [s.Action].flat().some((action) => action.startsWith('kms:')));
    expect(kmsStatements.find((s) => [s.Action].flat().includes('kms:Encrypt'))!.Resource).toBe(replicaKey);
    expect(referencedIds(kmsStatements.find((s) => [s.Action].flat().includes('kms:Decrypt'))!.Resource)).toEqual([
      logicalId(synth.stack, archive.encryptionKey!),
    ]);
  });

  it('DR-5: koerier:globalTableConsistency "strong" makes the idempotency table a strongly consistent global table over three Regions, or two and a witness; the other tables stay as they are', () => {
    const three = synthInRegion(
      PRIMARY_REGION,
      primaryContext({
        'koerier:globalTableRegions': [STANDBY_REGION, 'eu-west-3'],
        'koerier:globalTableConsistency': 'strong',
      }),
    );
    const [[id, table]] = ofType(three, 'AWS::DynamoDB::GlobalTable') as [[string, CfnResourceJson]];
    expect(id).toContain('idempotency');
    expect(table.Properties.MultiRegionConsistency).toBe('STRONG');
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    const regions = (table.Properties.Replicas as { Region: string; PointInTimeRecoverySpecification?: unknown }[]).map(
      (replica) => replica.Region,
    );
    expect(regions.sort()).toEqual([PRIMARY_REGION, STANDBY_REGION, 'eu-west-3'].sort());
    const tables = ofType(three, 'AWS::DynamoDB::Table').map(([tableId]) => tableId);
    expect(tables.some((tableId) => tableId.includes('idempotency'))).toBe(false);
    expect(tables.some((tableId) => tableId.includes('subscriptions'))).toBe(true);

    const witnessed = synthInRegion(
      PRIMARY_REGION,
      primaryContext({ 'koerier:globalTableConsistency': 'strong', 'koerier:globalTableWitnessRegion': 'eu-west-2' }),
    );
    const [[, withWitness]] = ofType(witnessed, 'AWS::DynamoDB::GlobalTable') as [[string, CfnResourceJson]];
    expect(withWitness.Properties.GlobalTableWitnesses).toEqual([{ Region: 'eu-west-2' }]);
    expect((withWitness.Properties.Replicas as unknown[]).length).toBe(2);
    expect(ofType(synthInRegion(PRIMARY_REGION, primaryContext()), 'AWS::DynamoDB::GlobalTable')).toHaveLength(0);
  });

  it.each([
    [
      'a standby without its replicas or key',
      { 'koerier:standby': { primaryRegion: PRIMARY_REGION } },
      /tables must name the replica.*\n.*credentialsKey must be the ARN of the primary's multi-Region/s,
    ],
    [
      'a standby missing the routes replica',
      {
        'koerier:standby': {
          primaryRegion: PRIMARY_REGION,
          tables: { ...REPLICA_NAMES, routes: undefined },
          credentialsKey: PRIMARY_KEY,
        },
      },
      /tables\.routes must be the name/,
    ],
    [
      'a standby whose primary is its own Region',
      { 'koerier:standby': { primaryRegion: STANDBY_REGION, tables: REPLICA_NAMES, credentialsKey: PRIMARY_KEY } },
      /this stack's own Region eu-central-1.*\n.*credentialsKey is in eu-west-1, not in the primary's Region eu-central-1/s,
    ],
    [
      'a single-Region credentials key',
      {
        'koerier:standby': {
          primaryRegion: PRIMARY_REGION,
          tables: REPLICA_NAMES,
          credentialsKey: `arn:aws:kms:${PRIMARY_REGION}:${TEST_ACCOUNT}:key/0a1b2c3d-1111-2222-3333-444455556666`,
        },
      },
      /credentialsKey must be the ARN of the primary's multi-Region credentials key/,
    ],
    [
      'an unknown standby field',
      {
        'koerier:standby': {
          primaryRegion: PRIMARY_REGION,
          tables: REPLICA_NAMES,
          credentialsKey: PRIMARY_KEY,
          bucket: 'x',
        },
      },
      /"bucket" is not a field/,
    ],
    [
      'a standby that makes global tables',
      { 'koerier:globalTableRegions': [PRIMARY_REGION] },
      /a standby uses the primary's global tables, it makes none/,
    ],
    [
      'a standby that replicates buckets',
      {
        'koerier:bucketReplicas': {
          archive: {
            bucket: 'arn:aws:s3:::other-archive',
            kmsKey: `arn:aws:kms:${PRIMARY_REGION}:${TEST_ACCOUNT}:key/0a1b2c3d-1111-2222-3333-444455556666`,
          },
        },
      },
      /a standby's buckets are the replication destinations/,
    ],
    [
      'a standby with a multi-Region key of its own',
      { 'koerier:multiRegionKeys': true },
      /holds a replica of the primary's instead/,
    ],
    [
      'a standby without the public name',
      { 'koerier:publicDomain': undefined, 'koerier:publicCertificateArn': undefined },
      /koerier:standby needs koerier:publicDomain/,
    ],
    [
      'a hosted zone id that is not one',
      { 'koerier:apiHostedZoneId': 'example.org' },
      /must be a Route 53 hosted zone id/,
    ],
  ])('DR-2: the standby settings refuse %s at synth', (_label, extra, message) => {
    expect(() => synthInRegion(STANDBY_REGION, standbyContext(extra))).toThrow(message);
  });

  it.each([
    [
      'a hosted zone without the public name',
      { 'koerier:publicDomain': undefined, 'koerier:publicCertificateArn': undefined, 'koerier:apiHostedZoneId': ZONE },
      /apiHostedZoneId holds the failover records of the API name: it needs koerier:publicDomain/,
    ],
    [
      '"strong" with one other Region and no witness',
      { 'koerier:globalTableConsistency': 'strong' },
      /needs three Regions, or two and a witness: koerier:globalTableRegions lists 1/,
    ],
    [
      '"strong" with three other Regions',
      {
        'koerier:globalTableConsistency': 'strong',
        'koerier:globalTableRegions': [STANDBY_REGION, 'eu-west-3', 'eu-west-2'],
      },
      /lists 3 besides this stack's/,
    ],
    [
      '"strong" with two other Regions and a witness',
      {
        'koerier:globalTableConsistency': 'strong',
        'koerier:globalTableRegions': [STANDBY_REGION, 'eu-west-3'],
        'koerier:globalTableWitnessRegion': 'eu-west-2',
      },
      /a strongly consistent global table has two replicas and a witness, or three replicas/,
    ],
    [
      '"strong" across Region sets',
      { 'koerier:globalTableConsistency': 'strong', 'koerier:globalTableRegions': [STANDBY_REGION, 'us-east-1'] },
      /one of DynamoDB's strongly consistent Region sets/,
    ],
    [
      '"strong" with a Region outside every set',
      { 'koerier:globalTableConsistency': 'strong', 'koerier:globalTableRegions': ['eu-north-1', STANDBY_REGION] },
      /strongly consistent Region sets/,
    ],
    [
      'a witness that holds a replica',
      { 'koerier:globalTableConsistency': 'strong', 'koerier:globalTableWitnessRegion': STANDBY_REGION },
      /already holds a replica/,
    ],
    [
      'a witness without "strong"',
      { 'koerier:globalTableWitnessRegion': 'eu-west-2' },
      /it needs koerier:globalTableConsistency "strong"/,
    ],
    [
      'a consistency that is not one',
      { 'koerier:globalTableConsistency': 'linearizable' },
      /must be "eventual" or "strong"/,
    ],
    [
      '"strong" without global tables',
      {
        'koerier:globalTableConsistency': 'strong',
        'koerier:globalTableRegions': undefined,
        'koerier:globalTableWitnessRegion': 'eu-west-2',
      },
      /is a mode of a global table/,
    ],
  ])('DR-5: the primary settings refuse %s at synth', (_label, extra, message) => {
    expect(() => synthInRegion(PRIMARY_REGION, primaryContext(extra))).toThrow(message);
  });

  it('DR-5: "strong" is refused when the stack\'s Region is not known at synth', () => {
    expect(() =>
      synthInRegion(
        undefined,
        primaryContext({
          'koerier:globalTableConsistency': 'strong',
          'koerier:globalTableRegions': [STANDBY_REGION, 'eu-west-3'],
        }),
      ),
    ).toThrow(/needs the stack's Region at synth/);
  });

  it('CARD-2: cdk-nag stays clean on a standby with its failover record and on a primary with a health check, a multi-Region key and a strongly consistent table', () => {
    const standby = synthInRegion(STANDBY_REGION, standbyContext({ 'koerier:apiHostedZoneId': ZONE }));
    expect(unacknowledgedFindings(standby.app)).toEqual([]);
    const primary = synthInRegion(
      PRIMARY_REGION,
      primaryContext({
        'koerier:apiHostedZoneId': ZONE,
        'koerier:globalTableRegions': [STANDBY_REGION, 'eu-west-3'],
        'koerier:globalTableConsistency': 'strong',
      }),
    );
    expect(unacknowledgedFindings(primary.app)).toEqual([]);
    // The global tables' replica provider is acknowledged by exact finding, each one that occurs.
    expect(unjustifiedAcknowledgements(primary.app)).toEqual([]);
  });
});
