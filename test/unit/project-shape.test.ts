/**
 * The project's own shape, as the brief sets it (CARD-1, CARD-8): a TypeScript project with the
 * named top level, and the named libraries declared and installed. A newcomer finds the code where
 * the brief says it is, and a removed library, a JavaScript source or AWS wire code of Koerier's own
 * slipping in fails here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : [relative(root, path)];
  });
}

describe('the project shape of the brief', () => {
  it('CARD-1: package.json, cdk.json, tsconfig.json, bin/, lib/, functions/ and test/ at the top level', () => {
    for (const file of ['package.json', 'cdk.json', 'tsconfig.json'])
      expect(statSync(join(root, file)).isFile(), file).toBe(true);
    for (const dir of ['bin', 'lib', 'functions', 'test'])
      expect(statSync(join(root, dir)).isDirectory(), dir).toBe(true);
  });

  it('CARD-1: TypeScript throughout: the sources under bin/, lib/ and functions/ are .ts files, type-checked strictly', () => {
    const notTypeScript = ['bin', 'lib', 'functions']
      .flatMap((dir) => sourceFiles(join(root, dir)))
      .filter((file) => !file.endsWith('.ts'));
    expect(notTypeScript).toEqual([]);
    const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: { strict?: boolean };
    };
    expect(compilerOptions.strict).toBe(true);
  });

  it('CARD-8: aws-cdk-lib, constructs, the SQS, DynamoDB and S3 clients, the Lambda types, jose and vitest are declared and installed', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    const declared = { ...manifest['dependencies'], ...manifest['devDependencies'] };
    const require = createRequire(join(root, 'package.json'));
    const named = [
      'aws-cdk-lib',
      'constructs',
      '@aws-sdk/client-sqs',
      '@aws-sdk/client-dynamodb',
      '@aws-sdk/client-s3',
      '@types/aws-lambda',
      'jose',
      'vitest',
    ];
    for (const library of named) {
      expect(declared[library], library).toBeDefined();
      expect(existsSync(join(require.resolve.paths(library)![0]!, library, 'package.json')), library).toBe(true);
    }
  });

  it('CARD-8, issue 27: every adapter that talks to DynamoDB, SQS, S3 or KMS sends through the SDK client, and functions/ holds no AWS wire code of its own', () => {
    const sources = sourceFiles(join(root, 'functions')).filter((file) => file.endsWith('.ts'));
    const text = (file: string) => readFileSync(join(root, file), 'utf8');
    // Signing, service targets and hosts are the SDK's: a hand-made request would show one of these.
    const wire =
      /SignatureV4|@smithy\/signature-v4|X-Amz-Target|x-amz-date|x-amz-content-sha256|\.amazonaws\.com\b(?!\/<pool id>)/i;
    expect(sources.filter((file) => wire.test(text(file)))).toEqual([]);
    const adapters = sourceFiles(join(root, 'functions', 'aws')).filter((file) =>
      /\/(dynamodb|sqs|s3|kms|lock-token-key|credential-cipher|signing-keys)[^/]*\.ts$/.test(file),
    );
    expect(adapters.length).toBeGreaterThan(20);
    const services =
      /from '@aws-sdk\/client-(dynamodb|sqs|s3|kms)'|from '\.\/(s3-objects|dynamodb-batch-write|sqs-message-queue)\.js'/;
    expect(adapters.filter((file) => /\.send\(|getSignedUrl\(/.test(text(file)) && !services.test(text(file)))).toEqual(
      [],
    );
    const clients = text('functions/aws/clients.ts');
    for (const client of ['DynamoDBClient', 'SQSClient', 'S3Client', 'KMSClient'])
      expect(clients).toContain(`new ${client}(`);
  });
});
