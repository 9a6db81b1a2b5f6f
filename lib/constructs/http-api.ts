/**
 * The API Gateway HTTP API: one Lambda integration (payload format 2.0) per function, one route
 * per route of functions/config/resources.ts, `$default` to the function marked `defaultRoute`, JSON access
 * logs, stage throttling and per-route throttling (by function, `koerier:routeThrottling`). No API
 * Gateway authorizer: the handlers verify the bearer JWTs.
 */
import { Lazy, Stack, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { RouteThrottle } from '../protection-config.js';
import { DEFAULT_LOG_RETENTION_DAYS } from '../retention-config.js';
import { servedPath, type FunctionSpec } from '../../functions/config/resources.js';

/**
 * The default limit of every route without its own (API Gateway applies default route settings
 * to each route), requests per second, well above the per-publisher limit the ingest enforces
 * itself (`KOERIER_PUBLISH_RATE_PER_MINUTE`): it protects Lambda concurrency and cost from floods.
 * The routes of the functions in `koerier:routeThrottling` get their own, lower limits.
 */
export const STAGE_THROTTLE = { rateLimit: 500, burstLimit: 1000 } as const;

/** Access log fields (HTTP API context variables). No headers: they would carry bearer tokens. */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTimeEpoch',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  method: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integration.latency',
  integrationError: '$context.integrationErrorMessage',
} as const;

const HANDLER_AUTHORIZATION =
  'Authorization happens in the handlers, the one code path shared with the laptop host: each protected route ' +
  "verifies the OAuth 2.0 client-credentials bearer JWT with jose against the organisation's issuer, audience " +
  'and JWKS (KOERIER_ISSUER, KOERIER_AUDIENCE, KOERIER_JWKS_URL) and checks its scopes, answering 401/403 as ' +
  'problem JSON. GET /openapi.json and the $default 404/405 answers are public by design.';

export interface KoerierHttpApiProps {
  /** Per function name: the throttle each of its routes gets instead of the stage default. */
  readonly routeThrottling?: Readonly<Record<string, RouteThrottle>>;
  /** Days the access log keeps its lines (`koerier:logRetentionDays`); default 90. */
  readonly logRetentionDays?: number;
}

export class KoerierHttpApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  readonly accessLogs: logs.LogGroup;
  private readonly routeOwners = new Map<string, string>();
  private readonly routeThrottling: Readonly<Record<string, RouteThrottle>>;
  /** CloudFormation's RouteSettings JSON as it is written: a Lazy value is not renamed to PascalCase for us. */
  private readonly routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};

  constructor(scope: Construct, id: string, props: KoerierHttpApiProps = {}) {
    super(scope, id);
    this.routeThrottling = props.routeThrottling ?? {};
    this.api = new apigw.HttpApi(this, 'Api', {
      // API names need not be unique, but the console lists them by it: test and production apart at a glance.
      apiName: Stack.of(this).stackName,
      description: 'Koerier CloudEvents gateway',
      // The stage is added below, to give it access logs and throttling.
      createDefaultStage: false,
    });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: (props.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS) as logs.RetentionDays,
    });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: STAGE_THROTTLE,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    const cfnStage = this.stage.node.defaultChild as apigw.CfnStage;
    cfnStage.routeSettings = Lazy.any({
      produce: () => (Object.keys(this.routeSettings).length > 0 ? this.routeSettings : undefined),
    });
  }

  /** The origin clients call (no trailing slash): the `$default` stage is served at the root; the API under `API_BASE_PATH`. */
  get url(): string {
    return this.api.apiEndpoint;
  }

  /** Routes the function's routes (and `$default`, when it is marked so) to it. */
  addFunction(name: string, fn: lambda.IFunction, spec: FunctionSpec): void {
    const integration = new HttpLambdaIntegration(`${name}Integration`, fn, {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    });
    const routes: apigw.HttpRoute[] = [];
    for (const route of spec.routes ?? []) {
      this.claim(`${route.method} ${route.path}`, name);
      routes.push(
        ...this.api.addRoutes({ path: servedPath(route.path), methods: [apigw.HttpMethod[route.method]], integration }),
      );
    }
    if (spec.defaultRoute) {
      this.claim('$default', name);
      routes.push(
        new apigw.HttpRoute(this, 'DefaultRoute', {
          httpApi: this.api,
          routeKey: apigw.HttpRouteKey.DEFAULT,
          integration,
        }),
      );
    }
    for (const route of routes)
      Validations.of(route).acknowledge({ id: 'AwsSolutions-APIG4', reason: HANDLER_AUTHORIZATION });
    const throttle = this.routeThrottling[name];
    if (throttle) {
      for (const route of routes) {
        const routeKey = (route.node.defaultChild as apigw.CfnRoute).routeKey;
        this.routeSettings[routeKey] = {
          ThrottlingRateLimit: throttle.rateLimit,
          ThrottlingBurstLimit: throttle.burstLimit,
        };
        // API Gateway refuses route settings for a route that does not exist yet.
        this.stage.node.addDependency(route);
      }
    }
  }

  private claim(routeKey: string, name: string): void {
    const owner = this.routeOwners.get(routeKey);
    if (owner !== undefined) {
      throw new Error(
        `route ${routeKey} is claimed by both function '${owner}' and function '${name}' in functions/config/resources.ts`,
      );
    }
    this.routeOwners.set(routeKey, name);
  }
}
