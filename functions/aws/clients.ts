/**
 * The SDK clients one set of dependencies sends with. Endpoints come from the standard
 * AWS_ENDPOINT_URL_<SERVICE> variables, which is how tests point the very same code at the
 * emulators. Nothing here is kept: the composition root builds one set per set of dependencies
 * (functions/composition/aws-dependencies.ts), so two sets in one process never share a client.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface AwsClients {
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
}

export function createAwsClients(): AwsClients {
  return { dynamodb: new DynamoDBClient({}), sqs: new SQSClient({}) };
}

/** Only AWS needs it: the laptop host encrypts with key files (credential-cipher.ts). */
export function createKmsClient(): KMSClient {
  return new KMSClient({});
}
