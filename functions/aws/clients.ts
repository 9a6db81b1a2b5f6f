/**
 * One SDK client per service per container, created on first use. Endpoints come from the
 * standard AWS_ENDPOINT_URL_<SERVICE> variables, which is how the laptop host points the very
 * same code at its emulators.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';

let sqs: SQSClient | undefined;
let dynamodb: DynamoDBClient | undefined;

export function sqsClient(): SQSClient {
  sqs ??= new SQSClient({});
  return sqs;
}

export function dynamoDbClient(): DynamoDBClient {
  dynamodb ??= new DynamoDBClient({});
  return dynamodb;
}
