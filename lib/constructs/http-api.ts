/**
 * The API Gateway HTTP API: one Lambda integration (payload format 2.0) per function, one route
 * per route of lib/resources.ts, `$default` to the function marked `defaultRoute`, JSON access
 * logs and stage throttling. No API Gateway authorizer: the handlers verify the bearer JWTs.
 */
import { Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionSpec } from '../resources.js';

/**
 * Whole-API ceiling, requests per second, well above the per-publisher limit the ingest enforces
 * itself (`KOERIER_PUBLISH_RATE_PER_MINUTE`): it protects Lambda concurrency and cost from floods.
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

export class KoerierHttpApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  readonly accessLogs: logs.LogGroup;
  private readonly routeOwners = new Map<string, string>();

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.api = new apigw.HttpApi(this, 'Api', {
      description: 'Koerier CloudEvents gateway',
      // The stage is added below, to give it access logs and throttling.
      createDefaultStage: false,
    });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logs.RetentionDays.THREE_MONTHS });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: STAGE_THROTTLE,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
  }

  /** The base URL clients call (no trailing slash): the `$default` stage is served at the root. */
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
      routes.push(...this.api.addRoutes({ path: route.path, methods: [apigw.HttpMethod[route.method]], integration }));
    }
    if (spec.defaultRoute) {
      this.claim('$default', name);
      routes.push(new apigw.HttpRoute(this, 'DefaultRoute', { httpApi: this.api, routeKey: apigw.HttpRouteKey.DEFAULT, integration }));
    }
    for (const route of routes) Validations.of(route).acknowledge({ id: 'AwsSolutions-APIG4', reason: HANDLER_AUTHORIZATION });
  }

  private claim(routeKey: string, name: string): void {
    const owner = this.routeOwners.get(routeKey);
    if (owner !== undefined) {
      throw new Error(`route ${routeKey} is claimed by both function '${owner}' and function '${name}' in lib/resources.ts`);
    }
    this.routeOwners.set(routeKey, name);
  }
}
