/**
 * The kinds of SDK client a builder sends with. Each names its own constructor, so a bundle holds
 * a client only if one of its adapters asks for that kind (issue 15, item 4).
 */
import {
  createDynamoDbClient,
  createKmsClient,
  createS3Client,
  createSesV2Client,
  createSqsClient,
} from '../aws/clients.js';
import type { ClientKind } from './composition.js';

export const dynamodbClient: ClientKind<'dynamodb'> = { name: 'dynamodb', create: createDynamoDbClient };
export const sqsClient: ClientKind<'sqs'> = { name: 'sqs', create: createSqsClient };
export const s3Client: ClientKind<'s3'> = { name: 's3', create: createS3Client };
/** Only AWS asks for it: the laptop host encrypts and signs with key files. */
export const kmsClient: ClientKind<'kms'> = { name: 'kms', create: createKmsClient };
/** Only the alerts function asks for it, and only where e-mail goes through SES (issue 30 item 3). */
export const sesv2Client: ClientKind<'sesv2'> = { name: 'sesv2', create: createSesV2Client };
