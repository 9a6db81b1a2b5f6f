/**
 * One SDK client per service per container, created on first use. Endpoints come from the
 * standard AWS_ENDPOINT_URL_<SERVICE> variables, which is how the laptop host points the very
 * same code at its emulators.
 */
import { SQSClient } from '@aws-sdk/client-sqs';

let sqs: SQSClient | undefined;

export function sqsClient(): SQSClient {
  sqs ??= new SQSClient({});
  return sqs;
}
