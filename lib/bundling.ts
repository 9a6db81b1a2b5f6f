/**
 * How every Lambda function is bundled: one set of esbuild options, run by CDK's local bundling
 * (`lambdaCode`) and by `bench/bundles.ts` and the bundle tests, so what is measured and tested is
 * exactly the code that is deployed.
 *
 * Code splitting: a module reached only through `import()` goes into a chunk file of its own
 * beside `index.mjs`, and Node reads and compiles it when the import first runs, not at the cold
 * start. The contract register's document parsers (1.7 MB) are loaded that way (issue 15). CDK's
 * `NodejsFunction` cannot split (it passes esbuild `--outfile`), so the functions are a
 * `lambda.Function` whose asset runs esbuild's own API here, without Docker.
 */
import { buildSync, type BuildOptions } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';

/** ESM has no `require`; CommonJS dependencies bundled into an ESM file get one from this banner (each chunk is its own module, so each gets it). */
const CJS_REQUIRE_BANNER =
  "import { createRequire as __koerierCreateRequire } from 'node:module'; const require = __koerierCreateRequire(import.meta.url);";

/** The repository's file, as an absolute path: esbuild resolves an alias in its working directory, which a build started by CDK need not share. */
const repoFile = (relative: string) => fileURLToPath(new URL(`../${relative}`, import.meta.url));

/**
 * Packages replaced in every bundle:
 * - the SDK's default credential chain, by the environment alone (functions/aws/lambda-credentials.ts says why);
 * - @asyncapi/specs (every AsyncAPI version's JSON schema), by the 3.x schemas the register takes (functions/app/asyncapi-3-schemas.ts);
 * - node-fetch, which the AsyncAPI parser's libraries would fetch `$ref`s and rulesets with, by a fetch that refuses
 *   (functions/app/refusing-node-fetch.ts): the register follows no external reference, and node-fetch brings whatwg-url and tr46.
 */
export const BUNDLE_ALIASES = {
  '@aws-sdk/credential-provider-node': repoFile('functions/aws/lambda-credentials.ts'),
  '@asyncapi/specs': repoFile('functions/app/asyncapi-3-schemas.ts'),
  'node-fetch': repoFile('functions/app/refusing-node-fetch.ts'),
} as const;

/** The file Lambda loads; the handler is `index.handler`. */
export const BUNDLE_FILE = 'index.mjs';
export const LAMBDA_HANDLER = 'index.handler';

/**
 * The esbuild options for one function: `entry` bundled into `outdir` as `index.mjs`, plus one
 * `<name>-<hash>.mjs` chunk per module reached only through `import()` and per piece of code such
 * a chunk shares with the entry, each with its own `.map`.
 */
export function esbuildOptions(entry: string, outdir: string): BuildOptions {
  return {
    entryPoints: { index: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: '[name]-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    // For stack traces that name the TypeScript sources: functions/app/source-mapped-stacks.ts reads a file's map when the first stack
    // through it is formatted. Not `--enable-source-maps`, which reads and parses it at every cold start (bench/results/bundles.json).
    sourcemap: true,
    // Line mapping for stack traces needs no embedded sources; leaving them out halves the asset.
    sourcesContent: false,
    // Prefer packages' ESM builds: they tree-shake.
    mainFields: ['module', 'main'],
    banner: { js: CJS_REQUIRE_BANNER },
    alias: { ...BUNDLE_ALIASES },
    // The AWS SDK is bundled rather than taken from the runtime: the version that was tested is the version that runs.
    external: [],
    logLevel: 'error',
  };
}

/**
 * A function's code for CDK: the repository, bundled by `esbuildOptions` into the asset directory.
 * The asset's hash is the bundle's, as NodejsFunction's was: the repository is not fingerprinted.
 */
export function lambdaCode(repoRoot: string, entry: string): lambda.Code {
  return lambda.Code.fromAsset(repoRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Required by the type; never run, because local bundling always succeeds or throws.
      image: DockerImage.fromRegistry('koerier-bundles-locally-with-esbuild'),
      local: new EsbuildBundling(entry),
    },
  });
}

/**
 * Runs esbuild in the synthesising process; never falls back to Docker: an esbuild failure fails
 * the synthesis, naming the error. `entry` is a field because CDK caches staged assets by the
 * JSON of their bundling options, and a function (`tryBundle`) is not in JSON: without it every
 * function of the stack would get the first function's bundle.
 */
class EsbuildBundling implements ILocalBundling {
  constructor(readonly entry: string) {}

  tryBundle(outputDir: string): boolean {
    buildSync(esbuildOptions(this.entry, outputDir));
    return true;
  }
}
