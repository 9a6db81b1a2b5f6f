/**
 * The contract register's documents on S3 (s3rver on the laptop), in the `contracts` bucket
 * encrypted with the stack's KMS key: `documents/<name>/<version>` holds the document as
 * published, `schemas/<name>/<version>.json` its messages' payload schemas (what the ingest
 * compiles). Written once per version and never changed.
 */
import type { ContractDocuments, MessageSchemas } from '../core/contracts/ports.js';
import type { S3Client } from '@aws-sdk/client-s3';
import { getObjectOrUndefined, putObjectWithChecksum } from './s3-objects.js';

export class S3ContractDocuments implements ContractDocuments {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async putDocument(name: string, version: string, text: string, mediaType: string): Promise<void> {
    await this.put(`documents/${name}/${version}`, text, mediaType);
  }

  getDocument(name: string, version: string): Promise<string | undefined> {
    return this.get(`documents/${name}/${version}`);
  }

  async putSchemas(name: string, version: string, schemas: MessageSchemas): Promise<void> {
    await this.put(`schemas/${name}/${version}.json`, JSON.stringify(schemas), 'application/json');
  }

  async getSchemas(name: string, version: string): Promise<MessageSchemas | undefined> {
    const text = await this.get(`schemas/${name}/${version}.json`);
    return text === undefined ? undefined : (JSON.parse(text) as MessageSchemas);
  }

  private async put(key: string, text: string, contentType: string): Promise<void> {
    await putObjectWithChecksum(this.s3, {
      Bucket: this.bucket,
      Key: key,
      Body: Buffer.from(text, 'utf8'),
      ContentType: contentType,
    });
  }

  private async get(key: string): Promise<string | undefined> {
    return (await getObjectOrUndefined(this.s3, this.bucket, key))?.body.toString('utf8');
  }
}
