/**
 * The names of the environment variables Koerier's configuration is read from. The CDK stack sets
 * them per function (lib/), the laptop host passes the same names in its own record, and
 * `loadConfig` (functions/config.ts) is the one place that reads them.
 */
export const settingEnv = {
  issuer: 'KOERIER_ISSUER',
  audience: 'KOERIER_AUDIENCE',
  jwksUrl: 'KOERIER_JWKS_URL',
  /** The issuer's token endpoint, shown in the API description (default: `<issuer>/oauth/token`). */
  tokenUrl: 'KOERIER_TOKEN_URL',
  // Which access tokens are accepted (review #17; functions/core/auth/access-tokens.ts `AccessTokenRules`).
  /** The JWT header `typ` required: `at+jwt` (default, RFC 9068) or `JWT` (issuers that label access tokens so). */
  accessTokenType: 'KOERIER_ACCESS_TOKEN_TYPE',
  /** The longest `exp - iat` accepted, in seconds (default 7200). */
  accessTokenMaxLifetimeSeconds: 'KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS',
  /** The one claim naming the client (default `client_id`; e.g. `azp` or `appid` for Entra ID). */
  clientIdClaim: 'KOERIER_CLIENT_ID_CLAIM',
  /** Comma-separated claims the scopes are read from, first present wins: `scope`, `scp`, `roles` (default `scope,scp`; Entra ID `roles`). */
  scopeClaims: 'KOERIER_SCOPE_CLAIMS',
  /** With `koerier:consoleUserPool`: the stack's user pool (its `iss`) and the console's client there, whose user tokens are taken too. */
  consoleUserPoolIssuer: 'KOERIER_CONSOLE_USER_POOL_ISSUER',
  consoleUserPoolClientId: 'KOERIER_CONSOLE_USER_POOL_CLIENT_ID',
  /** Comma-separated origins whose validation requests the ingest accepts (`*` for any). */
  allowedOrigins: 'KOERIER_ALLOWED_ORIGINS',
  /** The name Koerier gives itself in `WebHook-Request-Origin` when it validates or delivers. */
  webhookOrigin: 'KOERIER_WEBHOOK_ORIGIN',
  /** Requests per minute per publisher announced to validators (`WebHook-Allowed-Rate`). */
  publishRatePerMinute: 'KOERIER_PUBLISH_RATE_PER_MINUTE',
  /** How long the router holds an ordered event after its acceptance before appending it to its lane (issue 33, docs/ORDERING.md). */
  orderingSettlingMs: 'KOERIER_ORDERING_SETTLING_MS',
  /** The largest event accepted on POST /events, in bytes of its JSON format text (default 4 MiB). */
  maxEventBytes: 'KOERIER_MAX_EVENT_BYTES',
  /** Events larger than this travel by reference: data to the claim check, `dataref` in the event (default 64 KiB, CE-14). */
  inlineEventBytes: 'KOERIER_INLINE_EVENT_BYTES',
  idempotencyTtlSeconds: 'KOERIER_IDEMPOTENCY_TTL_SECONDS',
  idempotencyLockSeconds: 'KOERIER_IDEMPOTENCY_LOCK_SECONDS',
  /** JSON: which clients may publish under which sources (see functions/core/auth/publish-grants.ts). */
  publishers: 'KOERIER_PUBLISHERS',
  /** JSON: which clients may subscribe to which types and sources (see functions/core/subscriptions). */
  entitlements: 'KOERIER_ENTITLEMENTS',
  /** Seconds a function uses its copy of the partner directory before reading it again (default 30, at most 60): how soon an admin's change takes effect. */
  partnersRefreshSeconds: 'KOERIER_PARTNERS_REFRESH_SECONDS',
  /** `true` on the laptop host only: lets sinks be plain-http loopback addresses. */
  allowLoopbackSinks: 'KOERIER_ALLOW_LOOPBACK_SINKS',
  /** Push delivery (docs/OPERATIONS.md): the retry schedule — first delay, longest single delay, how long retries go on. */
  deliveryRetryInitialSeconds: 'KOERIER_DELIVERY_RETRY_INITIAL_SECONDS',
  deliveryRetryMaxDelaySeconds: 'KOERIER_DELIVERY_RETRY_MAX_DELAY_SECONDS',
  deliveryRetryWindowSeconds: 'KOERIER_DELIVERY_RETRY_WINDOW_SECONDS',
  /** Bounds on one delivery request. */
  deliveryConnectTimeoutMs: 'KOERIER_DELIVERY_CONNECT_TIMEOUT_MS',
  deliveryResponseTimeoutMs: 'KOERIER_DELIVERY_RESPONSE_TIMEOUT_MS',
  deliveryMaxResponseBytes: 'KOERIER_DELIVERY_MAX_RESPONSE_BYTES',
  /** Circuit breaker per subscription: consecutive failures that open it, and its first cool-down. */
  deliveryBreakerFailures: 'KOERIER_DELIVERY_BREAKER_FAILURES',
  deliveryBreakerCooldownSeconds: 'KOERIER_DELIVERY_BREAKER_COOLDOWN_SECONDS',
  /** A target failing this long without one success is suspended. */
  deliverySuspendAfterSeconds: 'KOERIER_DELIVERY_SUSPEND_AFTER_SECONDS',
  /** How long attempt history and dead letters are kept. */
  deliveryHistorySeconds: 'KOERIER_DELIVERY_HISTORY_SECONDS',
  deadLetterRetentionSeconds: 'KOERIER_DEAD_LETTER_RETENTION_SECONDS',
  /** Tests only: a PEM file of extra CA certificates trusted for deliveries (a local certificate authority). */
  outboundCaFile: 'KOERIER_OUTBOUND_CA_FILE',
  /** Public base URL of the API, for links Koerier hands out (validation callbacks). */
  publicBaseUrl: 'KOERIER_PUBLIC_BASE_URL',
  /** The `source` of Koerier's own operational events (e.g. urn:nld:oin:<OIN>:systeem:koerier); default: the public base URL. */
  operationsSource: 'KOERIER_OPERATIONS_SOURCE',
  logLevel: 'KOERIER_LOG_LEVEL',
  /** The CloudFormation stack the function belongs to: the dimension of its metrics, so two stacks in one account keep theirs apart. */
  stackName: 'KOERIER_STACK_NAME',
  /** Comma-separated clients whose subscriptions may say `validation: "agreed"` (consent agreed out of band, WH-5). */
  validationAgreedClients: 'KOERIER_VALIDATION_AGREED_CLIENTS',
  /** `required` (default, NL GOV) or `agreed-for-directory-partners` (Edukoppeling): whose subscriptions skip the handshake by default (functions/core/webhooks/handshake-policy.ts). */
  validationHandshake: 'KOERIER_VALIDATION_HANDSHAKE',
  /** Laptop host only: directory of the local key files that stand in for KMS (`<name>.key`). */
  localKeysDir: 'KOERIER_LOCAL_KEYS_DIR',
  /** Seconds Koerier waits for a target's answer to the validation request (WH-4). */
  validationTimeoutSeconds: 'KOERIER_VALIDATION_TIMEOUT_SECONDS',
  /** Seconds a target has to approve through the validation callback before the subscription counts as rejected. */
  validationWindowSeconds: 'KOERIER_VALIDATION_WINDOW_SECONDS',
  /** Requests per minute Koerier asks each target for (`WebHook-Request-Rate`); unset: not asked. */
  webhookRequestRate: 'KOERIER_WEBHOOK_REQUEST_RATE',
  /** Edge protection (docs/OPERATIONS.md): per-client requests per minute on the management routes, per container. */
  manageRatePerMinute: 'KOERIER_MANAGE_RATE_PER_MINUTE',
  /** Set behind CloudFront only: the value of its origin header; requests without it are refused before any work. */
  originVerifySecret: 'KOERIER_ORIGIN_VERIFY_SECRET',
  // Who may do what towards targets (issue 8, items 14 and 19).
  /** `oauth2-only` (default, Edukoppeling) or `bearer-or-oauth2`: which sink credentials subscriptions may carry. */
  sinkCredentials: 'KOERIER_SINK_CREDENTIALS',
  /** Comma-separated ports sinks and token URLs may name (default `443`); the laptop host may reach any port on loopback. */
  outboundPorts: 'KOERIER_OUTBOUND_PORTS',
  // Trust on the wire (issue 12, items 5 and 6; docs/OPERATIONS.md "Signed deliveries" and "Client certificate").
  /**
   * Comma-separated keys that sign deliveries, newest first: the first signs, all are published at
   * `GET /.well-known/http-message-signatures-directory`. A KMS key (ECC_NIST_P256, SIGN_VERIFY) or `local:<name>` on the laptop.
   */
  signingKeys: 'KOERIER_SIGNING_KEYS',
  /**
   * The client certificate Koerier presents when a target asks for one (mTLS): the ARN of a Secrets
   * Manager secret holding the PEM certificate chain and private key, or `file:<path>` of such a PEM (laptop).
   */
  clientCertificate: 'KOERIER_CLIENT_CERTIFICATE',
  /** Pull delivery (docs/PULL.md): long polls at once per subscription, and per client, across all containers. */
  pullMaxPollsPerSubscription: 'KOERIER_PULL_MAX_POLLS_PER_SUBSCRIPTION',
  pullMaxPollsPerClient: 'KOERIER_PULL_MAX_POLLS_PER_CLIENT',
  /** Days the event archive keeps every routed event (docs/REPLAY.md): the lifecycle rule, and the oldest a replay reaches. */
  archiveRetentionDays: 'KOERIER_ARCHIVE_RETENTION_DAYS',
  /** Per-client quotas' defaults (issue 28 item 13; functions/core/quotas): a partner's own, set through the admin API, win. */
  quotaMaxPullSubscriptions: 'KOERIER_QUOTA_MAX_PULL_SUBSCRIPTIONS',
  quotaMaxConcurrentReplays: 'KOERIER_QUOTA_MAX_CONCURRENT_REPLAYS',
  quotaUploadBytesPerHour: 'KOERIER_QUOTA_UPLOAD_BYTES_PER_HOUR',
  /** Out-of-band alerts (issue 30 item 3): the From address of alert e-mail, of the SES identity `koerier:alertSender` names. */
  alertSender: 'KOERIER_ALERT_SENDER',
  /** The laptop host only: alert e-mail is written as .eml files into this folder instead of sent. */
  alertMailDir: 'KOERIER_ALERT_MAIL_DIR',
  /** The ZGW Notificaties API (issue 34, docs/ZGW.md): seconds after its `iat` a client's HS256 token is refused (default 3600). */
  zgwMaxTokenAgeSeconds: 'KOERIER_ZGW_MAX_TOKEN_AGE_SECONDS',
} as const;
