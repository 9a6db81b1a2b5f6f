/**
 * The one list of Koerier's deployment settings (issue 31 item 2): every `koerier:*` CDK context
 * key the CDK app reads, with its default and meaning. The synth refuses any other `koerier:*`
 * key (lib/stack-config.ts), docs/DEPLOYING.md's settings table is generated from it
 * (`npm run docs:generate`), and test/infra/settings-catalogue.test.ts checks that every key
 * lib/ and bin/ name is here and that the table in the guide is the one this list makes.
 */
import { runtimeSettings } from './runtime-settings.js';

export interface SettingDescription {
  readonly key: `koerier:${string}`;
  /** As the guide shows it: a value, "required", "unset" or a sentence. */
  readonly default: string;
  readonly meaning: string;
}

/** The function settings of lib/runtime-settings.ts, whose defaults and bounds the rows there hold. */
function runtimeRows(): SettingDescription[] {
  return runtimeSettings.map((setting) => ({
    key: setting.contextKey,
    default: setting.default === undefined ? 'unset' : String(setting.default),
    meaning: `${setting.meaning}; ${setting.min} to ${setting.max}`,
  }));
}

export const settingsCatalogue: readonly SettingDescription[] = [
  {
    key: 'koerier:stackName',
    default: '`Koerier` (with a stage: `Koerier-<stage>`)',
    meaning:
      "the CloudFormation stack name; every physical name, the HTTP API's name and the metrics' `Stack` dimension follow from it",
  },
  {
    key: 'koerier:stage',
    default: 'unset',
    meaning:
      "a label such as `test` or `prod` (lower case, at most 16): tagged `koerier:stage` on every resource, named in the stack description, and the default stack name's suffix",
  },
  {
    key: 'koerier:identityProvider',
    default: 'unset',
    meaning:
      '`keycloak`, `entra-id` or `edukoppeling`: fills the token rules and, where the issuer says it, the JWKS and token URL ([Identity provider](#identity-provider)); explicit settings win',
  },
  {
    key: 'koerier:issuer',
    default: 'required',
    meaning: 'the OAuth 2.0 issuer, `iss` of the access tokens, https',
  },
  {
    key: 'koerier:audience',
    default: 'required',
    meaning: 'the `aud` the access tokens must carry',
  },
  {
    key: 'koerier:jwksUrl',
    default: 'required, unless the preset derives it',
    meaning: "the issuer's JWKS, https",
  },
  {
    key: 'koerier:tokenUrl',
    default: "the preset's, else `<issuer>/oauth/token`",
    meaning: "the issuer's token endpoint, published in the API description",
  },
  {
    key: 'koerier:accessTokenType',
    default: '`at+jwt` (presets: Keycloak and Entra ID `JWT`)',
    meaning: 'the JWT header `typ` accepted; `JWT` also accepts `at+jwt`',
  },
  {
    key: 'koerier:accessTokenMaxLifetimeMinutes',
    default: '120',
    meaning: 'the longest `exp - iat` accepted, 1 to 1440',
  },
  {
    key: 'koerier:clientIdClaim',
    default: '`client_id` (Keycloak `azp`; Entra ID `azp`, v1.0 issuer `appid`)',
    meaning: 'the one claim that names the client; never a fallback',
  },
  {
    key: 'koerier:scopeClaims',
    default: '`scope,scp` (Keycloak and Edukoppeling `scope`; Entra ID `roles`)',
    meaning:
      'the claims the scopes are read from, first present wins: `scope` (space-separated), `scp`, `roles` (arrays too)',
  },
  {
    key: 'koerier:allowedOrigins',
    default: 'required',
    meaning:
      'host names (not URLs: `events.partner.example.org`, not `https://events.partner.example.org/`) whose webhook validation requests the ingest accepts, compared with their `WebHook-Request-Origin`; `*` for any',
  },
  {
    key: 'koerier:webhookOrigin',
    default: 'required',
    meaning:
      'the host name (not a URL: `koerier.example.org`) Koerier gives itself in `WebHook-Request-Origin` when it validates or delivers; targets compare it with the names they allow',
  },
  {
    key: 'koerier:operationsSource',
    default: "the API's URL",
    meaning:
      'the `source` of Koerier\'s own operational events (OPERATIONS.md, "Operational events"), e.g. `urn:nld:oin:<OIN>:systeem:koerier`',
  },
  {
    key: 'koerier:publishers',
    default: 'required',
    meaning:
      'which client may publish under which source prefixes, `{"<client id>": ["<source prefix>", ...]}`; no two clients may overlap; seeds the partner directory, which the admin API changes at run time',
  },
  {
    key: 'koerier:entitlements',
    default: '`{}` (nobody may subscribe)',
    meaning:
      'which clients may subscribe to which event types and sources, `{"<client id>": [{"typePrefix": "..."}]}`, at most 2048 bytes; seeds the partner directory',
  },
  {
    key: 'koerier:fixedEgressAddresses',
    default: '0',
    meaning:
      '`0`, `1` or `2`: deliveries, token requests and handshakes leave from that many fixed addresses (NAT gateways with Elastic IPs, stack output `EgressAddresses`), about $39 a month per address ([OPERATIONS.md](OPERATIONS.md#fixed-egress-addresses-koerierfixedegressaddresses))',
  },
  {
    key: 'koerier:validationAgreedClients',
    default: 'none',
    meaning:
      'subscribers whose webhook consent was agreed out of band: their subscriptions may skip the handshake (WH-5)',
  },
  {
    key: 'koerier:validationHandshake',
    default: '`required` (Edukoppeling preset: `agreed-for-directory-partners`)',
    meaning:
      'who is asked the webhook validation handshake (`OPTIONS` with `WebHook-Request-Origin`, WH-4). `required` (NL GOV): every push subscription, except those of `koerier:validationAgreedClients` that say `validation: "agreed"`. `agreed-for-directory-partners` (Edukoppeling, which drops abuse protection, rule 3f / EDU-3): a client in the partner directory has its consent agreed out of band, so its subscriptions start `active` without the handshake unless they ask for it (`validation: "handshake"`); only with `koerier:sinkCredentials` `oauth2-only` ([SUBSCRIPTIONS.md](SUBSCRIPTIONS.md#consent-the-validation-handshake-wh-4-wh-5-wh-6))',
  },
  {
    key: 'koerier:sinkCredentials',
    default: '`oauth2-only`',
    meaning:
      '`oauth2-only` or `bearer-or-oauth2`: which credentials a subscription may carry towards its target; the Edukoppeling preset allows only `oauth2-only`',
  },
  {
    key: 'koerier:outboundPorts',
    default: '`[443]`',
    meaning: 'ports sinks and token URLs may name',
  },
  {
    key: 'koerier:signingKeys',
    default: '`["stack"]`',
    meaning:
      "the KMS keys that sign deliveries (RFC 9421), newest first: key ARNs (`ECC_NIST_P256`, `SIGN_VERIFY`, in the stack's partition) and/or `stack`, the key the stack creates; `[]` turns signing off ([OPERATIONS.md](OPERATIONS.md#signed-deliveries-issue-12))",
  },
  {
    key: 'koerier:clientCertificateSecretArn',
    default: 'unset (no client certificate)',
    meaning:
      'the ARN of a Secrets Manager secret holding the mTLS client certificate chain and key as one PEM text, presented to targets that ask for one; needs the Parameters and Secrets extension in the region ([Supported regions](#supported-regions))',
  },
  {
    key: 'koerier:powertoolsLayerArn',
    default: 'unset',
    meaning:
      "the ARN of the Powertools for AWS Lambda (TypeScript) layer for the stack's region and arm64: with it, traces carry a subsegment per AWS SDK call; without it, active tracing's function segments only",
  },
  {
    key: 'koerier:idempotencyTtlDays',
    default: '7',
    meaning: 'how long idempotency keys live, 1 to 13 (deliveries retry no longer, and SQS keeps a message 14 days)',
  },
  {
    key: 'koerier:alarmEmail',
    default: 'unset',
    meaning:
      "an address subscribed to the alarm topic (dead letters, function errors, the inbound queue's age, API 5xx, suspensions in bulk); without it the synth warns, as no alarm reaches anyone until someone subscribes to the topic",
  },
  {
    key: 'koerier:consoleClientId',
    default: 'unset (no console)',
    meaning:
      "the console's public client at `koerier:issuer` (authorization code with PKCE, redirect URI `<ConsoleUrl>`): the stack serves the console from S3 behind CloudFront (output `ConsoleUrl`) and lets that origin call the API ([README](../README.md#the-console)); needs `koerier:consoleDomain` ([TLS](#tls-edu-4))",
  },
  {
    key: 'koerier:consoleUserPool',
    default: 'unset (no user pool)',
    meaning:
      "for an organisation without an OpenID Connect provider for its people: the sign-in domain prefix of a Cognito user pool the stack creates for the console (`https://<prefix>.auth.<region>.amazoncognito.com`, unique in the region), with no self sign-up, required MFA, a strong password policy and the console as its only client (PKCE, no secret); the API takes that client's user tokens beside the partners', for reading only (EDU-2). Users act for the partner of their group `partner:<client id>`; the group `admin` widens what they read to every partner's subscriptions. Not together with `koerier:consoleClientId`; needs `koerier:consoleDomain` ([README](../README.md#the-console), [TLS](#tls-edu-4))",
  },
  {
    key: 'koerier:publishRatePerMinute',
    default: '6000',
    meaning: 'requests per minute per publisher, counted across all containers; past it 429 with `Retry-After`',
  },
  {
    key: 'koerier:manageRatePerMinute',
    default: '600',
    meaning: 'requests per minute per client on the subscription and delivery-admin routes, per container',
  },
  {
    key: 'koerier:ingestReservedConcurrency',
    default: '50',
    meaning: 'concurrent ingest executions reserved, and its ceiling; `"none"` reserves nothing',
  },
  {
    key: 'koerier:pullReservedConcurrency',
    default: '20',
    meaning: 'concurrent pull invocations (long polls) reserved, and their ceiling; `"none"` reserves nothing',
  },
  {
    key: 'koerier:routeThrottling',
    default: 'ingest 300/600, subscriptions 50/100, deliveryAdmin 20/40, payloads 100/200',
    meaning:
      'API Gateway limits per function\'s routes, `{"ingest": {"rateLimit": 300, "burstLimit": 600}}`; routes without one keep the stage\'s',
  },
  {
    key: 'koerier:bucketReplicas',
    default: 'unset (no replicas)',
    meaning:
      'the archive and payload buckets replicated to buckets of a standby stack in a second Region, with S3 Replication Time Control (15 minutes) and its metrics: `{"archive": {"bucket": "<bucket ARN>", "kmsKey": "<KMS key ARN>"}, "payloads": {…}}`; turns on versioning ([DISASTER-RECOVERY](DISASTER-RECOVERY.md))',
  },
  {
    key: 'koerier:globalTableRegions',
    default: 'unset (single-Region tables)',
    meaning:
      'the partner directory, subscriptions and idempotency keys as DynamoDB global tables with a replica in each Region listed, e.g. `["eu-central-1"]` (multi-Region eventual consistency; [DISASTER-RECOVERY](DISASTER-RECOVERY.md))',
  },
  {
    key: 'koerier:standby',
    default: 'unset (a primary)',
    meaning:
      'this stack is the standby of a primary in another Region: `{"primaryRegion": "eu-west-1", "tables": {"partners": "<name>", "subscriptions": "<name>", "routes": "<name>", "idempotency": "<name>"}, "credentialsKey": "<the primary\'s output CredentialsKeyArn>"}`; it uses the replicas of the primary\'s global tables by name, a replica of its multi-Region credentials key, and its own archive and payload buckets as the replication destinations (outputs `archiveReplicaBucketArn`, `…KmsKeyArn` for the primary\'s `koerier:bucketReplicas`); needs `koerier:publicDomain` ([DISASTER-RECOVERY](DISASTER-RECOVERY.md))',
  },
  {
    key: 'koerier:apiHostedZoneId',
    default: 'unset (the DNS record is yours)',
    meaning:
      'with `koerier:publicDomain`: the Route 53 hosted zone of the API name; the primary gets the PRIMARY failover alias record with a health check on its own API (`/v1/openapi.json`, every 30 s, unhealthy after 3 failures), a standby the SECONDARY one',
  },
  {
    key: 'koerier:multiRegionKeys',
    default: '`false`',
    meaning:
      "`true`: the credentials key is a multi-Region primary key (output `CredentialsKeyArn`), so a standby can decrypt the replicated sink credentials; set it when the stack is first deployed: CloudFormation refuses to change an existing key's `MultiRegion`",
  },
  {
    key: 'koerier:globalTableConsistency',
    default: '`eventual`',
    meaning:
      "`strong`: the idempotency table as a multi-Region strongly consistent global table (a new table), with `koerier:globalTableRegions` listing 2 Regions, or 1 and `koerier:globalTableWitnessRegion`, all in one of DynamoDB's Region sets; every write waits for another Region",
  },
  {
    key: 'koerier:globalTableWitnessRegion',
    default: 'unset',
    meaning: 'with `koerier:globalTableConsistency` `strong` and one other Region: the witness Region',
  },
  {
    key: 'koerier:edgeProtection',
    default: '`none`',
    meaning: '`none` or `cloudfront-waf`: CloudFront with an AWS WAF web ACL in front of the API',
  },
  {
    key: 'koerier:edgeWebAclArn',
    default: 'unset',
    meaning: 'with `cloudfront-waf`: an existing CLOUDFRONT web ACL instead of creating one in us-east-1',
  },
  {
    key: 'koerier:edgeRateLimits',
    default: '`{"perIp": 30000, "perAuthorization": 30000}`',
    meaning: 'with `cloudfront-waf`: WAF rate rules, requests per 5 minutes',
  },
  {
    key: 'koerier:edgeDomain',
    default: 'unset',
    meaning:
      "with `cloudfront-waf`, required (or `koerier:allowCloudFrontDefaultCertificate`): the API's host name at CloudFront, e.g. `koerier.gemeente.nl`, served with TLS 1.2 or higher (`TLSv1.2_2021`); the API URL the stack hands out; point it at the output `EdgeDnsTarget` ([TLS](#tls-edu-4))",
  },
  {
    key: 'koerier:edgeCertificateArn',
    default: 'unset',
    meaning: 'with `koerier:edgeDomain`: its ACM certificate, in `us-east-1`',
  },
  {
    key: 'koerier:consoleDomain',
    default: 'unset',
    meaning:
      "with a console, required (or `koerier:allowCloudFrontDefaultCertificate`): the console's host name, e.g. `console.koerier.gemeente.nl`, served with `TLSv1.2_2021`; the only origin the API and the sign-in accept for it; point it at the output `ConsoleDnsTarget` ([TLS](#tls-edu-4))",
  },
  {
    key: 'koerier:consoleCertificateArn',
    default: 'unset',
    meaning: 'with `koerier:consoleDomain`: its ACM certificate, in `us-east-1`',
  },
  {
    key: 'koerier:publicDomain',
    default: 'unset (the `execute-api` URL)',
    meaning:
      "without `cloudfront-waf`: the API's host name, e.g. `koerier.gemeente.nl`; the stack creates an API Gateway custom domain (`TLS_1_2`) mapped to the API, and every link Koerier hands out names it (`dataref`, validation callbacks, operational events' `source`, the API description's `servers`, the console's API URL, output `ApiUrl`); point it at the output `PublicDomainDnsTarget` ([Your own domain name](#your-own-domain-name-koerierpublicdomain))",
  },
  {
    key: 'koerier:publicCertificateArn',
    default: 'unset',
    meaning: "with `koerier:publicDomain`: its ACM certificate, in the stack's region",
  },
  {
    key: 'koerier:allowCloudFrontDefaultCertificate',
    default: '`false`',
    meaning:
      '`true`: the operator accepts that a CloudFront distribution given no name of its own answers on its `cloudfront.net` name, which takes TLS 1.0 and 1.1 (below EDU-4); refused when every distribution has a name ([TLS](#tls-edu-4))',
  },
  {
    key: 'koerier:alertSender',
    default: 'unset',
    meaning:
      "out-of-band alerts' From address (issue 30 item 3), e.g. `koerier-alerts@gemeente.nl`: the address or its domain must be an SES identity verified in the stack's region (and out of the SES sandbox to reach any address); the alerts function alone may `ses:SendEmail`, from that identity only. Unset: alert e-mail is not sent (webhook alerts are)",
  },
  {
    key: 'koerier:batchingWindowSeconds',
    default: 'router 1, delivery 0, alerts 30, replayWorker 0, erasureWorker 0',
    meaning:
      "per queue-triggered function, seconds SQS gathers messages before invoking it (0 to 300): more is cheaper, less is faster. Measured (docs/PERFORMANCE.md): at 5 events/s the router's 1 s window takes 0.2 invocations per event and adds up to a second (p50 670 ms), 0 s takes 1 invocation per event; at 500 events/s both take 0.1 and add nothing. The alerts function's window is what makes alerts that fire together one digest per contact. The laptop host uses 0 s (alerts 5 s)",
  },
  {
    key: 'koerier:batchSizes',
    default: 'router 10, delivery 10, alerts 100, replayWorker 1, erasureWorker 1',
    meaning:
      "the most messages one router invocation is given (1 to 100; above 10 only with a batching window of at least 1 s, as SQS demands); the delivery function's, the replay worker's and the erasure worker's are fixed, as their batches wait on targets and run jobs one after another. `{\"router\": 100}` shares the router's per-batch requests (the archive object, the route index read, the ledger's commit, the event source's receive and delete) among up to 100 events: measured (docs/COST.md) ingest + 1 push subscriber $4.61 → $3.99 per million for single publishes and $2.26 → $1.63 for batches of 10, at traffic that fills the batch; below 100 events/s the router then waits out its window, up to a second",
  },
  {
    key: 'koerier:provisionedPollers',
    default: 'unset (standard mode)',
    meaning:
      'the router\'s and the delivery function\'s SQS event sources in provisioned mode, `{"router": {"minimumPollers": 50, "maximumPollers": 500}, "delivery": {…}}`: pollers kept ready (2 to 200) and the most they grow to (2 to 2,000), each poller billed; standard mode starts at 5 batches and adds 300 a minute ([SCALE](SCALE.md#what-to-raise-or-set-for-10000-events-a-second))',
  },
  {
    key: 'koerier:warmThroughput',
    default: 'unset (a new on-demand table: 12,000 read and 4,000 write units/s)',
    meaning:
      'the idempotency and deliveries tables pre-warmed, `{"idempotency": {"writeUnitsPerSecond": 40000}, "deliveries": {"readUnitsPerSecond": 12000, "writeUnitsPerSecond": 20000}}`: at least 12,000 read and 4,000 write units a second (never lowered once raised; each raise is billed); above 40,000, the default table-level quota, the synth warns, as the deployment then needs a raised quota ([SCALE](SCALE.md#what-to-raise-or-set-for-10000-events-a-second))',
  },
  ...runtimeRows(),
  {
    key: 'koerier:inlineEventBytes',
    default: '65536',
    meaning:
      'events larger than this travel by reference: their data goes to the claim check, `dataref` in the event (CE-14); 65536 to 253952',
  },
  {
    key: 'koerier:maxEventBytes',
    default: '4194304',
    meaning: 'the largest event `POST /events` accepts; larger data goes through `POST /payloads`; 1024 to 6291456',
  },
  {
    key: 'koerier:logRetentionDays',
    default: '90',
    meaning:
      "days CloudWatch keeps every log group of the stack (the functions', the API's access log, the egress flow log); logs hold no event data, but name clients, event ids and addresses; one of CloudWatch's periods, 1 to 3653 ([PRIVACY.md](PRIVACY.md#retention))",
  },
];

/** Every key of the list. */
export const knownSettingKeys: ReadonlySet<string> = new Set(settingsCatalogue.map((setting) => setting.key));
