/**
 * How every Lambda function is bundled: one set of esbuild settings, given to CDK's
 * `NodejsFunction` and, in the same form esbuild itself takes, to `bench/bundles.ts`, so the
 * benchmark measures exactly the code that is deployed.
 */
import { fileURLToPath } from 'node:url';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/** ESM has no `require`; CommonJS dependencies bundled into an ESM file get one from this banner. */
const CJS_REQUIRE_BANNER = "import { createRequire as __koerierCreateRequire } from 'node:module'; const require = __koerierCreateRequire(import.meta.url);";

/**
 * The SDK's default credential chain, replaced in the bundles by the environment alone
 * (functions/aws/lambda-credentials.ts says why). An absolute path: esbuild resolves an alias in
 * its working directory, which CDK's local bundling does not promise to be the project's.
 */
const CREDENTIAL_CHAIN_ALIAS = {
  '@aws-sdk/credential-provider-node': fileURLToPath(new URL('../functions/aws/lambda-credentials.ts', import.meta.url)),
} as const;

/** @asyncapi/specs (every AsyncAPI version's JSON schema), replaced by the 3.x schemas the register takes (functions/app/asyncapi-3-schemas.ts says why). */
const ASYNCAPI_SPECS_ALIAS = {
  '@asyncapi/specs': fileURLToPath(new URL('../functions/app/asyncapi-3-schemas.ts', import.meta.url)),
} as const;

const BUNDLE_ALIASES = { ...CREDENTIAL_CHAIN_ALIAS, ...ASYNCAPI_SPECS_ALIAS } as const;

const settings = {
  target: 'node24',
  minify: true,
  // For stack traces that name the TypeScript sources: functions/app/source-mapped-stacks.ts reads the map when the first stack is
  // formatted. Not `--enable-source-maps`, which reads and parses it at every cold start (6–20 ms, bench/results/bundles.json).
  sourceMap: true,
  // Line mapping for stack traces needs no embedded sources; leaving them out halves the asset.
  sourcesContent: false,
  // Prefer packages' ESM builds: they tree-shake.
  mainFields: ['module', 'main'],
  banner: CJS_REQUIRE_BANNER,
} as const;

/**
 * For `NodejsFunction`. The AWS SDK is bundled rather than taken from the runtime: the version
 * that was tested is the version that runs, and a tree-shaken SDK loads faster than the full one.
 */
export const lambdaBundling: BundlingOptions = {
  ...settings,
  mainFields: [...settings.mainFields],
  format: OutputFormat.ESM,
  bundleAwsSDK: true,
  // CDK writes each entry as `--alias:<package>=<path>`.
  esbuildArgs: { '--alias': Object.entries(BUNDLE_ALIASES).map(([name, path]) => `${name}=${path}`) },
};

/** The file CDK writes for an ESM bundle; the Lambda handler is `index.handler`. */
export const BUNDLE_FILE = 'index.mjs';

/**
 * The esbuild build options equivalent to `lambdaBundling`, as CDK turns them into esbuild
 * arguments (`--bundle --platform=node --target --format --minify --sourcemap
 * --sources-content=false --main-fields --banner:js --alias`, and no externals because the SDK is bundled).
 */
export function esbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: settings.target,
    format: 'esm',
    minify: settings.minify,
    sourcemap: settings.sourceMap,
    sourcesContent: settings.sourcesContent,
    mainFields: [...settings.mainFields],
    banner: { js: settings.banner },
    alias: { ...BUNDLE_ALIASES },
    external: [],
  };
}
