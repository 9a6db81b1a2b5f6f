/**
 * The SDK clients one set of dependencies sends with. Endpoints come from the standard
 * AWS_ENDPOINT_URL_<SERVICE> variables, which is how tests point the very same code at the
 * emulators. Nothing here is kept: the composition root builds one set per set of dependencies
 * (functions/composition/aws-dependencies.ts), so two sets in one process never share a client.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface AwsClients {
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
  /** The claim check's objects (EDU-1). */
  readonly s3: S3Client;
}

export function createAwsClients(): AwsClients {
  return { dynamodb: createDynamoDbClient(), sqs: createSqsClient(), s3: createS3Client() };
}

// One constructor per client, so a Lambda bundle that only reaches DynamoDB carries no S3 client (issue 15, item 4).
export function createDynamoDbClient(): DynamoDBClient {
  return new DynamoDBClient({});
}

export function createSqsClient(): SQSClient {
  return new SQSClient({});
}

export function createS3Client(): S3Client {
  return new S3Client({});
}

/** Only AWS needs it: the laptop host encrypts with key files (credential-cipher.ts). */
export function createKmsClient(): KMSClient {
  return new KMSClient({});
}
