/**
 * Runs Lambda handlers directly, the way API Gateway would call them, against the emulators and a
 * real JWKS served over HTTP. For integration tests of one handler without the whole laptop host.
 * One harness per test file: handlers read their configuration once per process.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { settingEnv } from '../../functions/config.js';
import { resourceEnv, routeKeyOfServed, routeTable, type QueueName } from '../../functions/config/resources.js';
import { apiGatewayEvent } from '../../local/api-gateway.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { lambdaContext } from '../../local/lambda-runtime.js';
import { recordedLambdaHandler } from './aws-operations-recorder.js';

export const TEST_ISSUER = 'https://issuer.test';
export const TEST_AUDIENCE = 'koerier';

export interface HandlerHarness {
  readonly emulators: Emulators;
  readonly sqs: SQSClient;
  token(clientId: string, scope: string): Promise<string>;
  /** Calls `handler` with the API Gateway v2 event for this request. */
  invoke(
    handler: (event: never, context: never) => Promise<unknown>,
    request: {
      method: string;
      path: string;
      routeKey: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    },
  ): Promise<{ status: number; headers: Record<string, string>; body: string; json: () => unknown }>;
  /** Every message now in the queue, removed from it. */
  drain(queue: QueueName): Promise<Message[]>;
  stop(): Promise<void>;
}

export async function startHandlerHarness(settings: Record<string, string> = {}): Promise<HandlerHarness> {
  const emulators = await startEmulators({ ttlSweep: false }); // fixed clocks in the past: no sweeping by real time
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  const jwks: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;

  Object.assign(process.env, emulators.awsEnvironment, emulators.resourceEnvironment, {
    [settingEnv.issuer]: TEST_ISSUER,
    [settingEnv.audience]: TEST_AUDIENCE,
    [settingEnv.jwksUrl]: jwksUrl,
    [settingEnv.allowedOrigins]: 'partner.example',
    // Each partner for its own organisation (grants of two clients may not overlap, review #15);
    // partner-a also for paths, which the tests of SHOULD-level source warnings use.
    [settingEnv.publishers]: JSON.stringify({
      'partner-a': ['urn:nld:oin:00000001823288444000:', '/'],
      'partner-b': ['urn:nld:oin:00000002222222222000:'],
      'partner-c': ['urn:nld:oin:00000009999999999000:'],
    }),
    [settingEnv.logLevel]: 'warn',
    ...settings,
  });
  const sqs = new SQSClient();

  const signer = privateKey as CryptoKey;
  return {
    emulators,
    sqs,
    token: (clientId, scope) =>
      new SignJWT({ client_id: clientId, scope })
        .setProtectedHeader({ alg: 'ES256', kid: 'test-key', typ: 'at+jwt' })
        .setIssuer(TEST_ISSUER)
        .setAudience(TEST_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(signer),
    async invoke(handler, request) {
      const rawHeaders = Object.entries(request.headers ?? {}).flat();
      const body =
        request.body === undefined
          ? Buffer.alloc(0)
          : Buffer.isBuffer(request.body)
            ? request.body
            : Buffer.from(request.body);
      const event = apiGatewayEvent({
        method: request.method,
        url: request.path,
        httpVersion: '1.1',
        rawHeaders: ['host', 'api.test', ...rawHeaders],
        body,
        sourceIp: '127.0.0.1',
        routeKey: request.routeKey,
        requestId: randomUUID(),
        now: new Date(),
      });
      // The permissions record (test/support/aws-operations-recorder.ts), when the run asks for it: the route names the function.
      const functionName = routeTable.find(
        (route) => `${route.method} ${route.path}` === routeKeyOfServed(request.routeKey),
      )?.function;
      const result = (await recordedLambdaHandler(functionName, handler)(
        event as never,
        lambdaContext('test', { memoryMb: 512, timeoutSeconds: 30 }) as never,
      )) as APIGatewayProxyStructuredResultV2;
      const text = result.body ?? '';
      return {
        status: result.statusCode ?? 200,
        headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)])),
        body: text,
        json: () => JSON.parse(text) as unknown,
      };
    },
    async drain(queue) {
      const queueUrl = emulators.resourceEnvironment[resourceEnv.queueUrl(queue)];
      const messages: Message[] = [];
      for (;;) {
        const batch = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
            AttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        const received = batch.Messages ?? [];
        if (received.length === 0) return messages;
        messages.push(...received);
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: received.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
      }
    },
    async stop() {
      sqs.destroy();
      await new Promise<void>((resolve) => jwks.close(() => resolve()));
      await emulators.stop();
    },
  };
}
