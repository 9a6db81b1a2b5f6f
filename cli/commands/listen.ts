/**
 * `koerier listen`: a local webhook receiver for developing a consumer (like `svix listen`). It
 * consents to the CloudEvents webhook validation handshake (OPTIONS, WH-4) for whoever asks, at any
 * rate or the one given (`--rate`, to see Koerier keep to it: WH-6), declaring that it takes batches, and prints every delivery: content mode, Idempotency-Key,
 * the events. Point a push subscription at it (plain http to loopback is allowed on the laptop):
 *   koerier subscriptions create --sink http://127.0.0.1:8080/ --type … --sink-token-url … --sink-client-id …
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, exitCodes } from '../exit-codes.js';
import { resolveSettings, type GlobalOptions } from '../settings.js';
import { integer } from './send.js';

interface ListenOptions {
  readonly port: number;
  readonly host: string;
  readonly status: number;
  readonly rate: string;
}

export function registerListen(program: Command): void {
  program
    .command('listen')
    .description('a local webhook receiver: answers the validation handshake and prints each delivery')
    .option('-p, --port <port>', 'port to listen on (0: any free port)', integer(0, 65_535), 8080)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option(
      '--rate <per-minute>',
      'the delivery rate to allow in the handshake (WebHook-Allowed-Rate): requests per minute, or * for any',
      rate,
      '*',
    )
    .option(
      '--status <code>',
      'the status to answer deliveries with (e.g. 503 or 415 to see retries and dead letters)',
      integer(200, 599),
      204,
    )
    .addHelpText(
      'after',
      '\nPrints "Listening on <url>" on stderr first; each delivery on stdout (--json: one JSON line each). Ctrl-C stops.',
    )
    .action(async (options: ListenOptions, command: Command) => {
      const { json } = await resolveSettings(command.optsWithGlobals<GlobalOptions>());
      let count = 0;
      const server = createServer((req, res) => {
        if (req.method === 'OPTIONS') {
          const origin = req.headers['webhook-request-origin'];
          res.writeHead(200, {
            ...(origin ? { 'webhook-allowed-origin': origin, 'webhook-allowed-rate': options.rate } : {}),
            allow: 'POST, OPTIONS',
            'accept-post': 'application/cloudevents+json, application/cloudevents-batch+json',
          });
          res.end();
          process.stderr.write(
            `validation request from ${String(origin ?? '(no origin)')}: consented${options.rate === '*' ? '' : ` at ${options.rate} per minute`}\n`,
          );
          return;
        }
        void readBody(req).then((body) => {
          res.writeHead(options.status).end();
          count++;
          print(describeDelivery(req, body, options.status), json);
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error) =>
          reject(new CliError(`cannot listen on ${options.host}:${options.port}: ${error.message}`, exitCodes.usage)),
        );
        server.listen(options.port, options.host, resolve);
      });
      const { port } = server.address() as AddressInfo;
      process.stderr.write(
        `Listening on http://${options.host}:${port}/ (answering ${options.status}); Ctrl-C stops.\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => server.close(() => resolve());
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      process.stderr.write(`${count} deliver${count === 1 ? 'y' : 'ies'} received.\n`);
    });
}

interface Delivery {
  readonly receivedAt: string;
  readonly method: string;
  readonly path: string;
  readonly mode: 'structured' | 'binary' | 'batch';
  readonly idempotencyKey: string | undefined;
  /** Only that a token came, and its scheme: never the token itself. */
  readonly authorization: string | undefined;
  readonly signed: boolean;
  readonly answered: number;
  readonly events: unknown[];
}

function describeDelivery(req: IncomingMessage, body: Buffer, answered: number): Delivery {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const text = body.toString('utf8');
  const mode =
    contentType === 'application/cloudevents-batch+json'
      ? 'batch'
      : contentType === 'application/cloudevents+json'
        ? 'structured'
        : 'binary';
  let events: unknown[];
  if (mode === 'binary') {
    const attributes = Object.fromEntries(
      Object.entries(req.headers)
        .filter(([name]) => name.startsWith('ce-'))
        .map(([name, value]) => [name.slice(3), safeDecode(String(value))]),
    );
    events = [{ ...attributes, datacontenttype: req.headers['content-type'], data: parseOr(text) }];
  } else {
    const parsed = parseOr(text);
    events = Array.isArray(parsed) ? parsed : [parsed];
  }
  const authorization = req.headers['authorization'];
  return {
    receivedAt: new Date().toISOString(),
    method: req.method ?? '',
    path: req.url ?? '/',
    mode,
    idempotencyKey: req.headers['idempotency-key']?.toString(),
    authorization: authorization ? `${authorization.split(' ')[0]} …` : undefined,
    signed: req.headers['signature'] !== undefined,
    answered,
    events,
  };
}

function print(delivery: Delivery, json: boolean): void {
  if (json) return void process.stdout.write(`${JSON.stringify(delivery)}\n`);
  const lines = [
    `${delivery.receivedAt} ${delivery.method} ${delivery.path} ${delivery.mode}, ${delivery.events.length} event${delivery.events.length === 1 ? '' : 's'}, ` +
      `Idempotency-Key ${delivery.idempotencyKey ?? '(none)'}, Authorization ${delivery.authorization ?? '(none)'}${delivery.signed ? ', signed' : ''} → ${delivery.answered}`,
    ...delivery.events.map((event) => `  ${JSON.stringify(event)}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function rate(value: string): string {
  if (value === '*' || /^[1-9]\d{0,5}$/.test(value)) return value;
  throw new InvalidArgumentError('a whole number of requests per minute, or *');
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
