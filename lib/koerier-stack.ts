/**
 * Koerier's AWS stack, generated from functions/config/resources.ts: every table, queue, bucket, key, function
 * and route described there appears here without touching the constructs.
 */
import {
  acknowledgeGlobalTableReplication,
  GLOBAL_TABLES,
  readDisasterRecovery,
  replicateBucket,
} from './constructs/disaster-recovery.js';
import { FailoverRecord, replicaBucketOutputs } from './constructs/failover.js';
import { parseFailoverSettings, type FailoverSettings } from './standby-config.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, CfnOutput, Lazy, Stack, Tags, Token, type CfnElement, type StackProps } from 'aws-cdk-lib';
import type { CfnApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Construct } from 'constructs';
import { Buckets } from './constructs/buckets.js';
import { ConsoleSite } from './constructs/console-site.js';
import { ConsoleUserPool, USER_POOL_CONSOLE_SCOPES } from './constructs/console-user-pool.js';
import { DeadLetterAlarms } from './constructs/dead-letter-alarms.js';
import { OperatorAlarms } from './constructs/operator-alarms.js';
import { KoerierDashboard } from './constructs/dashboard.js';
import { FixedEgress } from './constructs/fixed-egress.js';
import { ApiDistribution, KoerierEdgeStack } from './constructs/edge-protection.js';
import { KoerierHttpApi } from './constructs/http-api.js';
import { PublicDomain } from './constructs/public-domain.js';
import { KoerierFunction } from './constructs/koerier-function.js';
import { Keys } from './constructs/keys.js';
import { SigningKey } from './constructs/signing-key.js';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Queues } from './constructs/queues.js';
import { Tables } from './constructs/tables.js';
import * as resources from '../functions/config/resources.js';
import {
  API_BASE_PATH,
  CLAIM_CHECK_LIVE_SECONDS,
  claimCheckRetentionSeconds,
  type BucketSpec,
} from '../functions/config/resources.js';
import { settingEnvironment, stackConfigWarnings, type StackConfig } from './stack-config.js';
import { regionSettings } from './regions.js';
import { readTrustConfig, STACK_SIGNING_KEY, type TrustConfig } from './trust-config.js';
import { DEFAULT_ARCHIVE_RETENTION_DAYS, settingEnv } from '../functions/config.js';
import { CONSOLE_SCOPES } from '../functions/core/auth/access-tokens.js';

/** The shape of functions/config/resources.ts, with names widened so tests can describe more. */
export interface ResourceDescription {
  readonly tables: Readonly<Record<string, resources.TableSpec>>;
  readonly queues: Readonly<Record<string, resources.QueueSpec>>;
  readonly buckets: Readonly<Record<string, BucketSpec>>;
  readonly keys: Readonly<Record<string, object>>;
  readonly functions: Readonly<Record<string, resources.FunctionSpec>>;
}

export const koerierResources: ResourceDescription = {
  tables: resources.tables,
  queues: resources.queues,
  buckets: resources.buckets,
  keys: resources.keys,
  functions: resources.functions,
};

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface KoerierStackProps extends StackProps {
  readonly config: StackConfig;
  /** @default functions/config/resources.ts */
  readonly resources?: ResourceDescription;
  /** Signing keys and the mTLS secret (issue 12). Default: read from the context (lib/trust-config.ts). */
  readonly trust?: TrustConfig;
}

export class KoerierStack extends Stack {
  readonly tables: Tables;
  readonly queues: Queues;
  readonly buckets: Buckets;
  readonly keys: Keys;
  readonly httpApi: KoerierHttpApi;
  readonly functions: ReadonlyMap<string, KoerierFunction>;
  readonly alarms: DeadLetterAlarms;
  /** What concerns the operator (issue 13, item 6); the SQS dead-letter queues' alarms are in `alarms`. */
  readonly operatorAlarms: OperatorAlarms;
  /** The operator's CloudWatch dashboard (lib/constructs/dashboard.ts). */
  readonly dashboard: KoerierDashboard;
  /** With `koerier:edgeProtection: "cloudfront-waf"`: CloudFront in front of the API. */
  readonly edge: ApiDistribution | undefined;
  /** The us-east-1 stack with the web ACL, when Koerier creates it (no `koerier:edgeWebAclArn`). */
  readonly edgeStack: KoerierEdgeStack | undefined;
  /** With `koerier:fixedEgressAddresses` above 0: the VPC the outbound functions call partners from. */
  readonly egress: FixedEgress | undefined;
  /** The console (koerier:consoleClientId or koerier:consoleUserPool), when the deployment has one. */
  readonly console: ConsoleSite | undefined;
  /** With `koerier:consoleUserPool`: the console's users. */
  readonly consoleUserPool: ConsoleUserPool | undefined;
  /** The stack's own delivery-signing key, when `koerier:signingKeys` lists "stack" (the default). */
  readonly signingKey: kms.Key | undefined;
  /** With `koerier:publicDomain`: the API's custom domain name, the host of every link (issue 31, item 1). */
  readonly publicDomain: PublicDomain | undefined;
  /** Issue 35: the standby and failover settings (lib/standby-config.ts). */
  readonly failover: FailoverSettings;
  /** With `koerier:apiHostedZoneId`: this stack's failover record of the API name (PRIMARY, or SECONDARY on a standby). */
  readonly failoverRecord: FailoverRecord | undefined;

  constructor(scope: Construct, id: string, props: KoerierStackProps) {
    const edgeSettings = props.config.protection.edge;
    const createsWebAcl = edgeSettings.mode === 'cloudfront-waf' && edgeSettings.webAclArn === undefined;
    super(scope, id, {
      description: `Koerier: CloudEvents gateway (NL GOV and Edukoppeling profiles)${props.config.stage ? `, stage ${props.config.stage}` : ''}`,
      // The web ACL's ARN comes from the us-east-1 stack.
      ...(createsWebAcl ? { crossRegionReferences: true } : {}),
      ...props,
    });
    const description = props.resources ?? koerierResources;
    const protection = props.config.protection;
    const trust = props.trust ?? readTrustConfig(this);
    const powertoolsLayerArn = this.node.tryGetContext('koerier:powertoolsLayerArn') as string | undefined;
    // What the stack's region (lib/regions.ts) gives and refuses, checked before anything is built.
    const regional = regionSettings(this, {
      clientCertificate:
        trust.clientCertificateSecretArn !== undefined &&
        Object.values(description.functions).some((spec) => spec.trust?.includes('client-certificate')),
      cloudFrontWebAcl: edgeSettings.mode === 'cloudfront-waf',
      contextArns: {
        'koerier:signingKeys': trust.signingKeys.filter((key) => key !== STACK_SIGNING_KEY),
        ...(trust.clientCertificateSecretArn
          ? { 'koerier:clientCertificateSecretArn': [trust.clientCertificateSecretArn] }
          : {}),
        ...(edgeSettings.mode === 'cloudfront-waf' && edgeSettings.webAclArn
          ? { 'koerier:edgeWebAclArn': [edgeSettings.webAclArn] }
          : {}),
        ...(powertoolsLayerArn ? { 'koerier:powertoolsLayerArn': [powertoolsLayerArn] } : {}),
        ...(props.config.publicDomain
          ? { 'koerier:publicCertificateArn': [props.config.publicDomain.certificateArn] }
          : {}),
      },
    });
    // Physical names are CloudFormation's (stack name + logical id), so two stacks never collide; the tag tells stages apart in the bill.
    if (props.config.stage) Tags.of(this).add('koerier:stage', props.config.stage);
    for (const warning of stackConfigWarnings(props.config))
      Annotations.of(this).addWarningV2(warning.id, warning.message);

    // Issue 35: global tables and bucket replicas to a standby Region, when set (docs/DISASTER-RECOVERY.md).
    const disasterRecovery = readDisasterRecovery(this);
    this.failover = parseFailoverSettings((key) => this.node.tryGetContext(key), {
      stackRegion: Token.isUnresolved(this.region) ? undefined : this.region,
      globalTableRegions: disasterRecovery.globalTableRegions,
      bucketReplicas: Object.keys(disasterRecovery.bucketReplicas).length > 0,
      publicDomain: props.config.publicDomain !== undefined,
    });
    const standby = this.failover.standby;
    this.tables = new Tables(
      this,
      'Tables',
      description.tables,
      Object.fromEntries(GLOBAL_TABLES.map((table) => [table, disasterRecovery.globalTableRegions])),
      props.config.capacity.warmThroughput,
      {
        // A standby names the replicas the primary's global tables keep in its Region.
        ...(standby ? { existing: standby.tables } : {}),
        ...(this.failover.strongConsistency
          ? { strong: { table: 'idempotency', witnessRegion: this.failover.strongConsistency.witnessRegion } }
          : {}),
      },
    );
    if (disasterRecovery.globalTableRegions.length > 0)
      acknowledgeGlobalTableReplication(
        this.tables,
        // The replicated tables with indexes: the provider's policy names those indexes.
        [...this.tables.byName]
          .filter(
            ([name, { spec }]) => (GLOBAL_TABLES as readonly string[]).includes(name) && spec.globalIndexes?.length,
          )
          .flatMap(([, { table }]) =>
            table.node.defaultChild ? [this.getLogicalId(table.node.defaultChild as CfnElement)] : [],
          ),
      );
    this.queues = new Queues(this, 'Queues', description.queues);
    this.buckets = new Buckets(this, 'Buckets', withArchiveRetention(description.buckets, props.config));
    for (const [name, replica] of Object.entries(disasterRecovery.bucketReplicas)) {
      const bucket = this.buckets.byName.get(name);
      if (bucket?.encryptionKey && replica) replicateBucket(this.buckets, name, bucket, bucket.encryptionKey, replica);
    }
    // The replicated subscriptions carry sink credentials encrypted under the credentials key: a
    // standby decrypts them with its replica of the primary's multi-Region key.
    this.keys = new Keys(this, 'Keys', description.keys, {
      ...(this.failover.multiRegionKeys ? { multiRegion: ['credentials'] } : {}),
      ...(standby ? { replicaOf: { credentials: standby.credentialsKey } } : {}),
    });
    const credentialsKey = this.keys.byName.get('credentials');
    if (credentialsKey && (this.failover.multiRegionKeys || standby))
      new CfnOutput(this, 'CredentialsKeyArn', {
        description: standby
          ? "The standby's replica of the primary's multi-Region credentials key"
          : 'The multi-Region credentials key: koerier:standby.credentialsKey of the standby stack',
        value: credentialsKey.keyArn,
      });
    if (standby) replicaBucketOutputs(this, this.buckets.byName);
    this.alarms = new DeadLetterAlarms(this, 'DeadLetterAlarms', {
      deadLetterQueues: new Map([...this.queues.byName].map(([name, pair]) => [name, pair.deadLetterQueue])),
      ...(props.config.alarmEmail === undefined ? {} : { email: props.config.alarmEmail }),
    });

    this.httpApi = new KoerierHttpApi(this, 'Http', {
      routeThrottling: protection.routeThrottling,
      logRetentionDays: props.config.logRetentionDays,
    });
    if (edgeSettings.mode === 'cloudfront-waf') {
      let webAclArn = edgeSettings.webAclArn;
      if (webAclArn === undefined) {
        if (Token.isUnresolved(this.region) || Token.isUnresolved(this.account)) {
          throw new Error(
            'koerier:edgeProtection "cloudfront-waf" creates its web ACL in a us-east-1 stack and needs this stack\'s account and ' +
              'region to refer to it: set CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION (cdk deploy with credentials does), or name an ' +
              'existing web ACL in koerier:edgeWebAclArn',
          );
        }
        this.edgeStack = new KoerierEdgeStack(scope, `${id}Edge`, {
          // Known: regionSettings refuses cloudfront-waf in a region whose partition's web ACL region it lacks.
          env: { account: this.account, region: regional.cloudFrontWebAclRegion! },
          crossRegionReferences: true,
          rateLimitPerIp: edgeSettings.rateLimitPerIp,
          rateLimitPerAuthorization: edgeSettings.rateLimitPerAuthorization,
        });
        webAclArn = this.edgeStack.webAcl.webAcl.attrArn;
      }
      this.edge = new ApiDistribution(this, 'Edge', {
        apiDomainName: `${this.httpApi.api.apiId}.execute-api.${this.region}.${this.urlSuffix}`,
        webAclArn,
        name: props.config.tls.edge,
      });
      if (props.config.tls.edge) {
        new CfnOutput(this, 'EdgeDnsTarget', {
          description: 'Point koerier:edgeDomain here (CNAME or Route 53 alias)',
          value: this.edge.distribution.distributionDomainName,
        });
      }
    }
    this.publicDomain = props.config.publicDomain
      ? new PublicDomain(this, 'PublicDomain', {
          name: props.config.publicDomain,
          api: this.httpApi.api,
          stage: this.httpApi.stage,
        })
      : undefined;
    this.failoverRecord =
      this.publicDomain && this.failover.apiHostedZoneId
        ? new FailoverRecord(this, 'Failover', {
            role: standby ? 'SECONDARY' : 'PRIMARY',
            hostedZoneId: this.failover.apiHostedZoneId,
            publicDomain: this.publicDomain,
            api: this.httpApi.api,
          })
        : undefined;
    // The one origin every link is built on: the custom domain, else CloudFront's, else execute-api.
    const publicUrl = this.publicDomain?.url ?? (this.edge ? this.edge.url : this.httpApi.url);
    this.signingKey = trust.signingKeys.includes(STACK_SIGNING_KEY)
      ? new SigningKey(this, 'SigningKey').key
      : undefined;
    const signingKeyArns = trust.signingKeys.map((key) => (key === STACK_SIGNING_KEY ? this.signingKey!.keyArn : key));
    const consoleSignIn = this.consoleSignIn(props.config, `${publicUrl}${API_BASE_PATH}`);
    this.console = consoleSignIn.site;
    this.consoleUserPool = consoleSignIn.pool;
    const settings = {
      ...settingEnvironment(props.config, `${publicUrl}${API_BASE_PATH}`),
      ...consoleSignIn.settings,
      ...(signingKeyArns.length > 0 ? { [settingEnv.signingKeys]: signingKeyArns.join(',') } : {}),
      ...(trust.clientCertificateSecretArn ? { [settingEnv.clientCertificate]: trust.clientCertificateSecretArn } : {}),
      ...(this.edge ? { [settingEnv.originVerifySecret]: this.edge.originSecret.secretValue.unsafeUnwrap() } : {}),
    };
    const functionResources = {
      tables: this.tables.byName,
      queues: this.queues.byName,
      buckets: this.buckets.byName,
      keys: this.keys.byName,
      pullQueuePrefix: pullQueuePrefixOf(this.stackName),
    };
    this.egress =
      props.config.egress.fixedAddresses > 0
        ? new FixedEgress(this, 'Egress', {
            addresses: props.config.egress.fixedAddresses,
            logRetentionDays: props.config.logRetentionDays,
          })
        : undefined;
    const network = this.egress ? { vpc: this.egress.vpc, securityGroup: this.egress.securityGroup } : undefined;
    // The Powertools layer (koerier:powertoolsLayerArn) gives the Tracer's SDK subsegments (functions/aws/tracing.ts); without it, active tracing's function segments only.
    const functions = new Map<string, KoerierFunction>();
    for (const [name, described] of Object.entries(description.functions)) {
      const spec = described.queueTrigger
        ? {
            ...described,
            queueTrigger: {
              ...described.queueTrigger,
              maxBatchingWindowSeconds:
                props.config.batchingWindowSeconds[name] ?? described.queueTrigger.maxBatchingWindowSeconds,
              batchSize: props.config.batchSizes[name] ?? described.queueTrigger.batchSize,
            },
          }
        : described;
      const reserved =
        name === 'ingest'
          ? protection.ingestReservedConcurrency
          : name === 'pull'
            ? protection.pullReservedConcurrency
            : 'none';
      const reservedConcurrency = reserved === 'none' ? undefined : reserved;
      const fn = new KoerierFunction(this, name, {
        spec,
        resources: functionResources,
        settings,
        repoRoot: REPO_ROOT,
        logRetentionDays: props.config.logRetentionDays,
        ...(props.config.alertSender === undefined ? {} : { alertSender: props.config.alertSender }),
        trust: {
          signingKeyArns,
          clientCertificateSecretArn: trust.clientCertificateSecretArn,
          ...(regional.paramsAndSecretsLayerArn ? { paramsAndSecretsLayerArn: regional.paramsAndSecretsLayerArn } : {}),
        },
        ...(reservedConcurrency === undefined ? {} : { reservedConcurrency }),
        ...(props.config.capacity.provisionedPollers[name]
          ? { provisionedPollers: props.config.capacity.provisionedPollers[name] }
          : {}),
        ...(spec.outbound && network ? { network } : {}),
        ...(powertoolsLayerArn ? { powertoolsLayerArn } : {}),
      });
      this.httpApi.addFunction(name, fn.function, spec);
      functions.set(name, fn);
    }
    this.functions = functions;
    this.operatorAlarms = new OperatorAlarms(this, 'OperatorAlarms', {
      topic: this.alarms.topic,
      inboundQueue: this.queues.byName.get('inbound')?.queue,
      functions: new Map([...functions].map(([name, fn]) => [name, fn.function])),
      api: this.httpApi.api,
      delivery: functions.has('delivery'),
      orderedLogGroups: ['delivery', 'pull'].flatMap((name) => functions.get(name)?.logGroup ?? []),
    });
    this.dashboard = new KoerierDashboard(this, 'Dashboard', {
      functions: new Map([...functions].map(([name, fn]) => [name, fn.function])),
      queues: this.queues.byName,
    });

    new CfnOutput(this, 'ApiUrl', {
      description: 'Base URL of the Koerier API, with its major version',
      value: `${publicUrl}${API_BASE_PATH}`,
    });
    if (signingKeyArns.length > 0) {
      new CfnOutput(this, 'SigningKeysUrl', {
        description: 'The JWK Set receivers verify signed deliveries with',
        value: `${publicUrl}/.well-known/http-message-signatures-directory`,
      });
    }
    if (this.signingKey)
      new CfnOutput(this, 'SigningKeyArn', {
        description: "The stack's delivery-signing KMS key",
        value: this.signingKey.keyArn,
      });
    for (const [name, { queue, deadLetterQueue }] of this.queues.byName) {
      new CfnOutput(this, `${name}QueueUrl`, { description: `URL of queue ${name}`, value: queue.queueUrl });
      new CfnOutput(this, `${name}DeadLetterQueueUrl`, {
        description: `URL of queue ${name}-dlq`,
        value: deadLetterQueue.queueUrl,
      });
    }
  }

  /**
   * The console (issue 16), when the deployment has one: signing in at the organisation's issuer
   * (`koerier:consoleClientId`) or at a user pool the stack creates (`koerier:consoleUserPool`).
   * `settings`: what lets the functions take the pool's tokens.
   */
  private consoleSignIn(
    config: StackConfig,
    apiUrl: string,
  ): { site?: ConsoleSite; pool?: ConsoleUserPool; settings: Record<string, string> } {
    if (config.consoleClientId === undefined && config.consoleUserPool === undefined) return { settings: {} };
    // The pool's client needs the console's URL and the console's config.json the client's id: resolved at synth time.
    const created: { pool?: ConsoleUserPool } = {};
    const fromPool = (value: (pool: ConsoleUserPool) => string) => Lazy.string({ produce: () => value(created.pool!) });
    const site = new ConsoleSite(this, 'Console', {
      consoleDir: join(REPO_ROOT, 'console'),
      apiUrl,
      issuer: config.consoleUserPool === undefined ? config.issuer : fromPool((p) => p.issuer),
      clientId: config.consoleClientId ?? fromPool((p) => p.client.userPoolClientId),
      scope: (config.consoleUserPool === undefined ? CONSOLE_SCOPES : USER_POOL_CONSOLE_SCOPES).join(' '),
      name: config.tls.console,
    });
    // The console origin's callers: its own origin with a bearer token; API Gateway answers the
    // browsers' preflights for that origin only. (A webhook validation OPTIONS is no preflight: it
    // still reaches the ingest.)
    (this.httpApi.api.node.defaultChild as CfnApi).corsConfiguration = {
      allowOrigins: [site.origin],
      allowHeaders: ['authorization', 'content-type', 'idempotency-key'],
      allowMethods: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'],
      maxAge: 600,
    };
    new CfnOutput(this, 'ConsoleUrl', { description: 'The operator and subscriber console', value: site.url });
    if (config.tls.console) {
      new CfnOutput(this, 'ConsoleDnsTarget', {
        description: 'Point koerier:consoleDomain here (CNAME or Route 53 alias)',
        value: site.distribution.distributionDomainName,
      });
    }
    if (config.consoleUserPool === undefined) return { site, settings: {} };
    // The root object serves the console at `/` too, and the console's redirect URI is the page it was opened at.
    const pool = (created.pool = new ConsoleUserPool(this, 'ConsoleUsers', {
      domainPrefix: config.consoleUserPool,
      consoleUrls: [site.url, `${site.origin}/`],
    }));
    new CfnOutput(this, 'ConsoleUserPoolId', {
      description: "The console's user pool: invite users and place them in groups here",
      value: pool.userPool.userPoolId,
    });
    new CfnOutput(this, 'ConsoleSignInDomain', {
      description: "The console's hosted sign-in",
      value: pool.domain.baseUrl(),
    });
    return {
      site,
      pool,
      settings: {
        [settingEnv.consoleUserPoolIssuer]: pool.issuer,
        [settingEnv.consoleUserPoolClientId]: pool.client.userPoolClientId,
      },
    };
  }
}

/**
 * The archive bucket's lifecycle expiry is the archive's retention (`koerier:archiveRetentionDays`,
 * docs/REPLAY.md), the same figure the replay worker judges retention by. The claim check's is
 * derived from it as the functions derive each object's expiry (`claimCheckRetentionSeconds`), so a
 * replayed event's `dataref` still answers (issue 36, item 8).
 */
export function withArchiveRetention(
  specs: Readonly<Record<string, BucketSpec>>,
  config: StackConfig,
): Readonly<Record<string, BucketSpec>> {
  if (!('archive' in specs)) return specs;
  const days = Number(config.runtimeSettings[settingEnv.archiveRetentionDays] ?? DEFAULT_ARCHIVE_RETENTION_DAYS);
  const payloads = specs['payloads'];
  const derived = {
    ...specs,
    archive: { objectRetentionSeconds: days * 24 * 3600 },
    // A claim check kept for good (no retention) outlives every replay already.
    ...(payloads?.objectRetentionSeconds === undefined
      ? {}
      : { payloads: { ...payloads, objectRetentionSeconds: claimCheckRetentionSeconds(days) } }),
  };
  checkClaimCheckOutlivesReplays(derived);
  return derived;
}

/**
 * Synth stops when claim-check objects would expire before the archive can no longer replay the
 * events that refer to them, plus what a replayed delivery needs (NL GOV §3.4.7; issue 36, item 8).
 */
export function checkClaimCheckOutlivesReplays(specs: Readonly<Record<string, BucketSpec>>): void {
  const archive = specs['archive']?.objectRetentionSeconds;
  const payloads = specs['payloads']?.objectRetentionSeconds;
  if (archive === undefined || payloads === undefined || payloads >= archive + CLAIM_CHECK_LIVE_SECONDS) return;
  const days = (seconds: number) => Math.round((seconds / 86400) * 100) / 100;
  throw new Error(
    `the claim check keeps objects ${days(payloads)} days, but replays reach back ${days(archive)} days and their deliveries need the data ` +
      `${days(CLAIM_CHECK_LIVE_SECONDS)} days more: a replayed event's dataref would answer 410 (claimCheckRetentionSeconds in functions/config/resources.ts)`,
  );
}

/**
 * The pull queues' name prefix: the stack name in lower case, cut to 24 characters, so
 * `<prefix>-pull-<uuid>-dlq` stays within SQS's 80 (two stacks in one account and region whose
 * names share their first 24 characters would share the prefix).
 */
export function pullQueuePrefixOf(stackName: string): string {
  if (Token.isUnresolved(stackName)) return 'koerier';
  return stackName
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-')
    .slice(0, 24);
}
