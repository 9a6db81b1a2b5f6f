// Lint: the recommended TypeScript rules, plus type-aware rules for mistakes the compiler lets
// through: a promise nobody awaits or that is handed to a callback expecting nothing (its rejection
// is lost, or it outlives its request), and a switch over a union that forgets a member — a
// `default` does not count, so a new member makes every switch over it decide. The import rules
// (layers, no cycles) are in .dependency-cruiser.cjs (`npm run deps`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'cdk.out/**',
      '.koerier/**',
      'bench/results/**',
      'coverage/**',
      '.stryker-tmp/**',
      'reports/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false }],
    },
  },
  {
    // One failure convention (docs/ARCHITECTURE.md, "Failures"): code under functions/ refuses by
    // throwing a KoerierError, and only core/http/problems.ts turns one into problem+json.
    files: ['functions/**/*.ts'],
    ignores: ['functions/core/http/problems.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/problems.js'],
              importNames: ['problemResponse'],
              message:
                'Throw a KoerierError instead; problemAnswer (core/http/problems.ts) is the one mapping to problem+json.',
            },
          ],
        },
      ],
    },
  },
  {
    // A file a reader can hold in their head. The cap counts code, not comments or blank lines, at
    // Prettier's print width of 120 (.prettierrc.json), so it is not met by making lines longer.
    files: ['functions/**/*.ts', 'cli/**/*.ts', 'console/src/**/*.ts', 'receiver/src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Plain JavaScript configuration files are outside tsconfig.json: no type information for them.
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
