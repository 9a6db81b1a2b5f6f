// The import rules of docs/ARCHITECTURE.md ("Layers"), checked by `npm run deps` in CI.
// functions/core is the domain: no AWS, no Lambda, no network I/O, nothing from the layers around
// it, so it can be tested without emulators and reused by every host. The adapters depend on the
// core, never the other way round; and no two files or areas may need each other, because a cycle
// makes "which one do I change first" unanswerable and breaks module initialisation order.

/** Node's network modules, with and without the `node:` prefix. */
const NETWORK_MODULES = ['http', 'https', 'http2', 'net', 'tls', 'dns', 'dgram'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-not-to-outer-layers',
      comment:
        'functions/core is the domain; everything else under functions/ (the adapters in aws and net, the handlers, the configuration reader, whatever wires them), the CDK app and the laptop host depend on it, never the reverse.',
      severity: 'error',
      from: { path: '^functions/core/' },
      to: { path: ['^functions/', '^lib/', '^local/', '^bin/'], pathNot: '^functions/core/' },
    },
    {
      name: 'core-not-to-aws',
      comment:
        "functions/core has no AWS SDK, no Lambda types (`from 'aws-lambda'` resolves to @types/aws-lambda) and no CDK: those live in functions/aws, functions/handlers and lib.",
      severity: 'error',
      from: { path: '^functions/core/' },
      to: { path: '(^|/)node_modules/(@aws-sdk|@smithy|@types/aws-lambda|aws-lambda|aws-cdk-lib|constructs)/' },
    },
    {
      name: 'core-no-network-io',
      comment:
        'functions/core does no network I/O: outbound HTTP is functions/net (with its SSRF guard), inbound HTTP is API Gateway or the laptop host.',
      severity: 'error',
      from: { path: '^functions/core/' },
      to: { path: [`^(node:)?(${NETWORK_MODULES.join('|')})$`, '(^|/)node_modules/undici/'] },
    },
    {
      name: 'aws-not-to-handlers',
      comment:
        'functions/aws holds adapters that handlers wire; an adapter that imports a handler would pull in its wiring and its module-level state.',
      severity: 'error',
      from: { path: '^functions/aws/' },
      to: { path: '^functions/handlers/' },
    },
    {
      name: 'app-not-to-adapters',
      comment:
        'functions/app (the apps of the composition root, once it exists) run on ports: AWS clients and Lambda types belong in functions/aws, functions/composition and functions/handlers.',
      severity: 'error',
      from: { path: '^functions/app/' },
      to: {
        path: [
          '^functions/(aws|handlers|composition)/',
          '(^|/)node_modules/(@aws-sdk|@smithy|@types/aws-lambda|aws-lambda)/',
        ],
      },
    },
    {
      name: 'functions-not-to-local-or-test',
      comment:
        'What is deployed never depends on the laptop host or the tests (esbuild would bundle them into the Lambda).',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: ['^local/', '^test/', '^bench/'] },
    },
    {
      name: 'functions-not-to-lib',
      comment:
        'The CDK app (lib/) reads what the functions describe (functions/config/resources.ts), never the reverse: a function that imported lib/ would pull aws-cdk-lib towards its bundle and make the deployed code depend on how it is deployed.',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '^lib/' },
    },
    {
      name: 'functions-not-to-undici',
      comment:
        "Outbound HTTP in the functions is node:http/https (functions/net/safe-http-client.ts): undici was more than half of a bundle and its cold import (issue 15, item 4). It stays a dev dependency, for the benchmarks' floors.",
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: '(^|/)node_modules/undici/' },
    },
    {
      name: 'cli-only-pure-core',
      comment:
        'The koerier CLI (cli/) talks to a gateway over HTTP like any partner: it may reuse pure helpers of functions/core (the CloudEvents HTTP binding), never adapters, apps, handlers, the laptop host or the CDK app.',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: ['^functions/(?!core/)', '^lib/', '^local/', '^bin/', '^test/', '^bench/'] },
    },
    {
      name: 'nothing-imports-cli',
      comment: 'The CLI is a client: what is deployed or hosted never depends on it.',
      severity: 'error',
      from: { path: '^(functions|lib|local|bin|bench)/' },
      to: { path: '^cli/' },
    },
    {
      name: 'client-stands-alone',
      comment:
        'client/ is the one API client the CLI, the browser console, the tests and the benches share: it talks to Koerier over HTTP and runs in a browser, so it imports nothing of the repository and no Node module. Its type generator (generate-types.ts) alone reads the API description it generates from.',
      severity: 'error',
      from: { path: '^client/', pathNot: '^client/generate-types\\.ts$' },
      to: { path: '^(functions|lib|local|bin|cli|console|test|bench)/' },
    },
    {
      name: 'client-no-node-modules',
      comment:
        'The client runs in the browser console too: no Node built-in module (fetch, Request and crypto are globals in both).',
      severity: 'error',
      from: { path: '^client/', pathNot: '^client/generate-types\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'receiver-kit-stands-alone',
      comment:
        'receiver/ is @koerier/receiver, a package of its own for partners (docs/RECEIVERS.md): it imports nothing of the repository, only its own files, Node and its declared dependencies.',
      severity: 'error',
      from: { path: '^receiver/' },
      to: { path: '^(functions|lib|local|bin|cli|client|console|test|bench)/' },
    },
    {
      name: 'nothing-imports-receiver-kit',
      comment: 'Only the tests use the receiver kit: Koerier itself never receives its own deliveries through it.',
      severity: 'error',
      from: { path: '^(functions|lib|local|bin|cli|client|console|bench)/' },
      to: { path: '^receiver/' },
    },
    {
      name: 'nothing-deployed-imports-client',
      comment:
        'The deployed functions and the CDK app are the server: they never call their own API through the client.',
      severity: 'error',
      from: { path: '^(functions|lib)/' },
      to: { path: '^client/' },
    },
    {
      name: 'no-file-cycles',
      comment: 'No two files under functions/ need each other, directly or through others.',
      severity: 'error',
      from: { path: '^functions/' },
      to: { circular: true },
    },
    {
      name: 'no-core-area-cycles',
      comment:
        'No two areas of functions/core (its folders: routing, delivery, subscriptions, ...) need each other, even when no two files do: an area is what one change touches and one test folder covers.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^functions/core/[^/]+$' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to nothing is a typo or a missing dependency.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    // Git worktrees of this repository link node_modules to the main checkout's: resolved through
    // the link, packages land outside the tree and the folder rules above stop seeing cycles.
    preserveSymlinks: true,
    // Type-only imports count: a cycle of types is still a cycle between modules to a reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js', '.cjs', '.mjs', '.json'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
