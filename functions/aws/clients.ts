/**
 * The AWS SDK for JavaScript v3 clients every adapter sends with, and the one place their settings
 * are chosen (issue 27). Region, endpoints, FIPS and dual-stack come from what the SDK reads itself
 * (AWS_REGION, AWS_ENDPOINT_URL_<SERVICE>, AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT), so
 * every partition AWS has is served as the SDK resolves it, and tests point the very same code at
 * the emulators through the standard variables. Nothing here is kept: the composition roots build
 * one client per kind (functions/composition/), so two sets of dependencies never share a client.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

export interface AwsClients {
  /** Every table. */
  readonly dynamodb: DynamoDBClient;
  /** Both queues, the pull queues and the replays queue. */
  readonly sqs: SQSClient;
  /** The claim check's objects (EDU-1), the event archive and the contract documents. */
  readonly s3: S3Client;
}

/** What a caller may set; anything left out is the SDK's own resolution (environment, shared config, instance role). */
export interface AwsClientSettings {
  readonly region?: string;
  readonly endpoint?: string;
  readonly credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
}

/**
 * The SDK's standard retry mode for every client: exponential backoff with full jitter and the
 * client-wide retry quota that stops a failing service's load from being multiplied by retries.
 * Each service keeps its own attempt count (DynamoDB's client asks for more than the default 3);
 * AWS_MAX_ATTEMPTS still overrides it, as the SDK documents.
 */
export const RETRY_MODE = 'standard';

function sdkSettings(settings: AwsClientSettings): AwsClientSettings & { readonly retryMode: string } {
  return { retryMode: RETRY_MODE, ...settings };
}

export function createAwsClients(settings: AwsClientSettings = {}): AwsClients {
  return { dynamodb: createDynamoDbClient(settings), sqs: createSqsClient(settings), s3: createS3Client(settings) };
}

// One constructor per client, so a Lambda bundle that only reaches DynamoDB carries no S3 client.
export function createDynamoDbClient(settings: AwsClientSettings = {}): DynamoDBClient {
  return new DynamoDBClient(sdkSettings(settings));
}

export function createSqsClient(settings: AwsClientSettings = {}): SQSClient {
  return new SQSClient(sdkSettings(settings));
}

/**
 * S3 computes and checks the checksums the adapters ask for (SHA-256 on every PUT, end-to-end
 * integrity of the claim check), and no others: the SDK's default would add a CRC32 to every
 * request, which the presigned upload URLs would then demand of the uploader too.
 */
export function createS3Client(settings: AwsClientSettings = {}): S3Client {
  return new S3Client({
    ...sdkSettings(settings),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Only AWS needs it: the laptop host encrypts and signs with key files (credential-cipher.ts, signing-keys.ts). */
export function createKmsClient(settings: AwsClientSettings = {}): KMSClient {
  return new KMSClient(sdkSettings(settings));
}

/** Alert e-mail (issue 30 item 3): only the alerts function makes one, and only where e-mail goes through SES. */
export function createSesV2Client(settings: AwsClientSettings = {}): SESv2Client {
  return new SESv2Client(sdkSettings(settings));
}
