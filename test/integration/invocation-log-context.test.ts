/**
 * docs/OPERATIONS.md promises `function_request_id` and `cold_start` on every line a function writes
 * in Lambda (issue 29, the logger never called Powertools' addContext). Run in a process of its own
 * (the emulated project isolates files): once a context is given, it stays on that process's loggers.
 */
import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import type { KoerierDependencies } from '../../functions/app/dependencies.js';
import { createLogger, logger, startInvocation } from '../../functions/app/logger.js';
import { httpHandler } from '../../functions/handlers/shared/api-gateway.js';
import { queueHandler } from '../../functions/handlers/shared/sqs-event-source.js';

// As Lambda sets it for an on-demand container; Powertools reports no cold start without it.
vi.hoisted(() => {
  process.env['AWS_LAMBDA_INITIALIZATION_TYPE'] = 'on-demand';
});

function contextOf(awsRequestId: string): Context {
  return {
    awsRequestId,
    functionName: 'koerier-router',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-central-1:123456789012:function:koerier-router',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/koerier-router',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

const linesOf = async (run: () => Promise<void>): Promise<Record<string, unknown>[]> => {
  const lines: string[] = [];
  const restore = logger.captureTo((line) => lines.push(line), 'info');
  try {
    await run();
  } finally {
    restore();
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
};

describe('the Lambda context on log lines (OPERATIONS.md, issue 29)', () => {
  it('a queue handler gives its invocation to every logger: the request id on each line, cold_start true once, then false', async () => {
    // The dependencies' own logger is made on the first invocation, as in Lambda (composition on first use).
    let deps: KoerierDependencies | undefined;
    const dependencies = () =>
      (deps ??= { log: createLogger('info'), metrics: { flush: () => undefined } } as unknown as KoerierDependencies);
    const handler = queueHandler((current: Pick<KoerierDependencies, 'log'>) => async ({ records }) => {
      current.log.info('batch seen', { records: records.length });
      logger.info('last-resort line');
      return { failedMessageIds: [] };
    })(dependencies);
    const event: SQSEvent = { Records: [] };

    const first = await linesOf(async () => void (await handler(event, contextOf('request-1'))));
    expect(first).toEqual([
      expect.objectContaining({ message: 'batch seen', function_request_id: 'request-1', cold_start: true }),
      // The last-resort logger was made by the suite's setup before the variable above was set, so
      // Powertools reports no cold start for it here; in Lambda the variable is there from the start.
      expect.objectContaining({ message: 'last-resort line', function_request_id: 'request-1' }),
    ]);
    const second = await linesOf(async () => void (await handler(event, contextOf('request-2'))));
    expect(second).toEqual([
      expect.objectContaining({ message: 'batch seen', function_request_id: 'request-2', cold_start: false }),
      expect.objectContaining({ message: 'last-resort line', function_request_id: 'request-2' }),
    ]);
  });

  it('an API handler does the same for the lines of its request', async () => {
    const deps = {
      log: createLogger('info'),
      metrics: { flush: () => undefined },
      config: {},
    } as unknown as KoerierDependencies;
    const handler = httpHandler((current: Pick<KoerierDependencies, 'log'>) => async () => {
      current.log.info('request seen');
      return { status: 204, headers: {}, body: '' };
    })(() => deps);
    const event = {
      routeKey: 'GET /health',
      rawPath: '/health',
      rawQueryString: '',
      headers: {},
      requestContext: { http: { method: 'GET', path: '/health' }, requestId: 'api-request' },
      isBase64Encoded: false,
    } as unknown as APIGatewayProxyEventV2;
    const lines = await linesOf(async () => void (await handler(event, contextOf('request-3'))));
    expect(lines).toEqual([
      expect.objectContaining({ message: 'request seen', function_request_id: 'request-3', cold_start: true }),
    ]);
  });

  it('without a context (a test calling a handler directly) nothing is added', async () => {
    const fresh = createLogger('info');
    startInvocation(undefined);
    startInvocation({});
    const lines = await linesOf(async () => fresh.info('no invocation'));
    expect(lines).toEqual([expect.not.objectContaining({ function_request_id: expect.anything() })]);
  });
});
