/**
 * The edge between an SQS event-source mapping (partial batch responses on) and a queue app:
 * `queueHandler(routerApp)(awsDependencies)` is the router's Lambda handler. Built on the first
 * batch, not at import.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { KoerierDependencies } from '../../app/dependencies.js';
import { startInvocation } from '../../app/logger.js';
import type { QueueApp } from '../../app/queue-app.js';

export type SqsHandler = (
  event: SQSEvent,
  context?: Pick<Context, 'getRemainingTimeInMillis'> & Partial<Context>,
) => Promise<SQSBatchResponse>;

/** What this edge reads itself: the metrics it flushes once per invocation. */
export type QueueEdgeDependencies = Pick<KoerierDependencies, 'metrics'>;

/** The dependencies must hold what the app reads (its parameter's type) and what the edge does. */
export function queueHandler<D>(
  makeApp: (deps: D) => QueueApp,
): (dependencies: () => D & QueueEdgeDependencies) => SqsHandler {
  return (dependencies) => {
    let app: QueueApp | undefined;
    return async (event, context) => {
      const deps = dependencies();
      startInvocation(context);
      app ??= makeApp(deps);
      const { failedMessageIds } = await app({
        records: event.Records.map((record) => ({
          messageId: record.messageId,
          body: record.body,
          receiptHandle: record.receiptHandle,
          receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? '1') || 1,
          attributes: stringAttributes(record.messageAttributes),
        })),
        // Without a context (a test calling the handler directly) the batch has no time limit.
        remainingTimeMs: () => context?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY,
      });
      // Once per invocation: the figures the app recorded become EMF records (functions/aws/emf-metrics.ts).
      deps.metrics.flush();
      return { batchItemFailures: failedMessageIds.map((itemIdentifier) => ({ itemIdentifier })) };
    };
  };
}

/** The message attributes of type String (the correlation id, the publisher, the receipt time). */
function stringAttributes(attributes: SQSRecord['messageAttributes'] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, attribute] of Object.entries(attributes ?? {})) {
    if (attribute.dataType === 'String' && attribute.stringValue !== undefined) out[name] = attribute.stringValue;
  }
  return out;
}
