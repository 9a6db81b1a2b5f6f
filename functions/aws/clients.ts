/**
 * The AWS clients one set of dependencies sends with: Koerier's lean clients, not the SDK's.
 * Endpoints come from the standard AWS_ENDPOINT_URL_<SERVICE> variables, which is how tests point
 * the very same code at the emulators. Nothing here is kept: the composition root builds one set per set of dependencies
 * (functions/composition/aws-dependencies.ts), so two sets in one process never share a client.
 */
import { DynamoDbRequests } from './dynamodb-requests.js';
import { KmsRequests } from './kms-requests.js';
import { S3Requests } from './s3-requests.js';
import { SqsRequests } from './sqs-requests.js';

export interface AwsClients {
  /** Every table: the lean DynamoDB client (./dynamodb-requests.ts). */
  readonly dynamodb: DynamoDbRequests;
  /** Both queues, the pull queues and the replays queue: the lean SQS client (./sqs-requests.ts). */
  readonly sqs: SqsRequests;
  /** The claim check's objects (EDU-1), the event archive and the contract documents: the lean S3 client (./s3-requests.ts). */
  readonly s3: S3Requests;
}

export function createAwsClients(): AwsClients {
  return { dynamodb: createDynamoDbClient(), sqs: createSqsClient(), s3: createS3Client() };
}

// One constructor per client, so a Lambda bundle that only reaches DynamoDB carries no S3 client (issue 15, item 4).
/** Not the SDK's DynamoDBClient: 30–32 KB of every function, and ten times the CPU per call (issue 15, item 4; ./dynamodb-requests.ts). */
export function createDynamoDbClient(): DynamoDbRequests {
  return new DynamoDbRequests();
}

/** Not the SDK's SQSClient: with @smithy/core it was most of every function's bundle and cold import (issue 15, item 4). */
export function createSqsClient(): SqsRequests {
  return new SqsRequests();
}

/** Not the SDK's S3Client: its 135 KB were in every function that reaches S3 (issue 15, item 4). */
export function createS3Client(): S3Requests {
  return new S3Requests();
}

/**
 * Only AWS needs it: the laptop host encrypts with key files (credential-cipher.ts). Not the SDK's
 * KMSClient: its 28 KB were in every function that reaches KMS (issue 15, item 4).
 */
export function createKmsClient(): KmsRequests {
  return new KmsRequests();
}
