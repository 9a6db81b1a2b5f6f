// Lint: the recommended TypeScript rules, plus the layering rule that keeps the domain free of AWS.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', '.koerier/**', 'bench/results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['functions/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['node:http', 'node:https', 'node:net', 'node:dns', 'http', 'https', 'net', 'dns', 'undici'].map((name) => ({
            name,
            message: 'functions/core does no network I/O.',
          })),
          patterns: [
            { group: ['@aws-sdk/*', 'aws-lambda', 'aws-cdk-lib', 'aws-cdk-lib/*'], message: 'functions/core is the domain: no AWS SDK, Lambda or CDK here.' },
            { group: ['**/aws/*', '**/handlers/*', '**/net/*', '**/app/*', '**/composition/*'], message: 'functions/core must not depend on outer layers.' },
          ],
        },
      ],
    },
  },
  {
    // The apps are functions of their dependencies' ports: the AWS adapters are built in functions/composition.
    files: ['functions/app/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@aws-sdk/*', 'aws-lambda'], message: 'functions/app runs on ports: AWS clients and Lambda types belong in functions/aws, functions/composition and functions/handlers.' },
            { group: ['**/aws/*', '**/handlers/*', '**/composition/*'], message: 'functions/app must not depend on adapters or entry points; take a port in KoerierDependencies.' },
          ],
        },
      ],
    },
  },
);
