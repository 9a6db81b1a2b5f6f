/**
 * Sends one delivery attempt through the safe client and reports it as the delivery core reads
 * it: an answer (status, headers, latency) or a classified failure. Never throws.
 */
import { systemClock, type Clock } from '../core/ports/clock.js';
import type { AttemptResult } from '../core/delivery/attempt-outcome.js';
import type { WebhookRequest } from '../core/delivery/webhook-request.js';
import { receiverAnswerOf } from '../core/delivery/receiver-answer.js';
import { classifyOutboundError, type SafeHttpClient } from './safe-http-client.js';

export function webhookSender(
  client: SafeHttpClient,
  clock: Clock = systemClock,
): (request: WebhookRequest) => Promise<AttemptResult> {
  return async (request) => {
    const started = clock();
    try {
      const response = await client.request({
        method: 'POST',
        url: request.url,
        headers: request.headers,
        body: request.body,
      });
      return {
        status: response.status,
        headers: response.headers,
        latencyMs: clock() - started,
        answer: receiverAnswerOf(response.headers, response.body),
      };
    } catch (error) {
      const failure = classifyOutboundError(error);
      return {
        failure: failure.kind,
        message: failure.message,
        status: failure.status,
        headers: failure.headers,
        latencyMs: clock() - started,
        // A body too large to read still came with its status and headers: keep those.
        answer: failure.status === undefined ? undefined : receiverAnswerOf(failure.headers ?? {}, undefined),
      };
    }
  };
}
