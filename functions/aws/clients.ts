/**
 * One SDK client per service per container, created on first use. Endpoints come from the
 * standard AWS_ENDPOINT_URL_<SERVICE> variables, which is how the laptop host points the very
 * same code at its emulators.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

let sqs: SQSClient | undefined;
let dynamodb: DynamoDBClient | undefined;
let s3: S3Client | undefined;

export function sqsClient(): SQSClient {
  sqs ??= new SQSClient({});
  return sqs;
}

export function dynamoDbClient(): DynamoDBClient {
  dynamodb ??= new DynamoDBClient({});
  return dynamodb;
}

export function s3Client(): S3Client {
  s3 ??= new S3Client({});
  return s3;
}
