/**
 * The claim check's cost per event (EDU-1) on the laptop host, next to inline delivery of the
 * same events in the same run: for events whose data is 64 KiB, 256 KiB and 1 MiB, published one
 * at a time at POST /events and delivered over HTTPS to a real receiver,
 *
 *   by reference: the subscription takes 64 KiB inline (the default), so the event goes out with
 *                 `dataref` and the receiver fetches the data at GET /payloads/{id};
 *   inline:       the subscription takes 2 MiB inline (`maxinlinebytes`), so the delivery function
 *                 reads the object back and sends the event with its data;
 *   no claim check (64 KiB only): a second host whose inline threshold is the queue's limit
 *                 (KOERIER_INLINE_EVENT_BYTES=253952), so the event never touches S3. Larger events
 *                 cannot travel without the claim check at all.
 *
 * Per event: the time from the publish to the data in the receiver's hands, the AWS requests the
 * functions make (SDK middleware on the host's clients; the laptop poller's own SQS receives and
 * deletes are not counted, and are the same for both), and the bytes written to and read from S3.
 * On a laptop the emulators set the pace; the request and byte counts are what carries over to AWS.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { observeAttempts, observeCalls } from '../functions/aws/aws-request-observer.js';
import { settingEnv } from '../functions/config.js';
import { settingsFromEnvironment, startKoerierHost, type KoerierHost } from '../local/host.js';
import {
  createLocalCertificateAuthority,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../test/support/https-receiver.js';
import { callApi, tryPublish } from '../test/support/koerier-api.js';

const EVENTS_PER_CASE = 8;
const DATA_SIZES = { '64KiB': 64 * 1024, '256KiB': 256 * 1024, '1MiB': 1024 * 1024 } as const;

const counts = { dynamodb: 0, sqs: 0, s3: 0, s3BytesWritten: 0, s3BytesRead: 0 };

export async function run(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'koerier-bench-claim-'));
  const authority = createLocalCertificateAuthority();
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  const hosts: KoerierHost[] = [];
  const startHost = async (name: string, extra: Record<string, string>) => {
    const host = await startKoerierHost({
      port: 0,
      stateDir: join(dir, name, 'state'),
      configFile: join(dir, name, 'koerier.local.json'),
      log: () => {},
      settings: {
        ...settingsFromEnvironment(process.env),
        [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
        [settingEnv.validationAgreedClients]: 'dev-subscriber',
        ...extra,
      },
    });
    hosts.push(host);
    // Per operation, as the SDK middleware's initialize step counted them: retries are not counted.
    for (const service of ['dynamodb', 'sqs'] as const) {
      observeCalls(host.awsClients[service], { beforeCall: () => void counts[service]++ });
    }
    observeAttempts(host.awsClients.s3, ({ operation, requestBytes, responseBytes }) => {
      counts.s3++;
      if (operation === 'PutObject') counts.s3BytesWritten += requestBytes;
      if (operation === 'GetObject' && responseBytes !== undefined) counts.s3BytesRead += responseBytes;
    });
    return {
      host,
      publisher: await host.issueToken('dev-publisher'),
      subscriber: await host.issueToken('dev-subscriber'),
    };
  };
  const agent = new Agent({ connections: 4 });
  const receivers: HttpsReceiver[] = [];
  try {
    const main = await startHost('main', {});
    const noClaimCheck = await startHost('inline-threshold-248KiB', { [settingEnv.inlineEventBytes]: '253952' });
    type Running = typeof main;

    const subscribe = async ({ host, subscriber }: Running, maxinlinebytes?: number) => {
      const receiver = await startHttpsReceiver({ authority });
      receivers.push(receiver);
      const type = `nl.bench.claim.${randomUUID().slice(0, 8)}.v1`;
      const response = await callApi(host.apiUrl, subscriber, 'POST', '/subscriptions', {
        sink: receiver.url,
        types: [type],
        validation: 'agreed',
        sinkcredential: receiver.sinkCredential,
        ...(maxinlinebytes ? { maxinlinebytes } : {}),
      });
      if (response.status !== 201) throw new Error(`subscription answered ${response.status}`);
      return { receiver, type };
    };

    /** Publishes one event and resolves with the data as the receiver holds it: inline, or fetched from its dataref. */
    const oneEvent = async (
      { host, publisher, subscriber }: Running,
      target: { receiver: HttpsReceiver; type: string },
      dataSize: number,
      seen: number,
    ) => {
      const data = randomUUID()
        .repeat(Math.ceil(dataSize / 36))
        .slice(0, dataSize);
      const body = JSON.stringify({
        specversion: '1.0',
        id: randomUUID(),
        source: 'urn:nld:oin:00000001234567890000:bench',
        type: target.type,
        datacontenttype: 'text/plain',
        data,
      });
      const started = performance.now();
      // Every case publishes this way, so the client's share of the time is the same in each.
      const published = await tryPublish(host.apiUrl, publisher, body);
      if (published.status !== 202) throw new Error(`ingest answered ${published.status}`);
      const delivered = (await target.receiver.waitForRequests(seen + 1, { timeoutMs: 30_000 })).at(-1)!;
      const event = JSON.parse(delivered.body) as { data?: string; dataref?: string; koerierdatadigest?: string };
      let received: string;
      if (event.dataref) {
        const fetched = await request(event.dataref, {
          dispatcher: agent,
          headers: { authorization: `Bearer ${subscriber}` },
        });
        received = await fetched.body.text();
        if (`sha-256=:${createHash('sha256').update(received).digest('base64')}:` !== event.koerierdatadigest)
          throw new Error('digest mismatch');
      } else {
        received = event.data ?? '';
      }
      if (received !== data) throw new Error('the data did not arrive intact');
      return { ms: performance.now() - started, byReference: event.dataref !== undefined };
    };

    const measure = async (running: Running, maxinlinebytes: number | undefined, dataSize: number) => {
      const target = await subscribe(running, maxinlinebytes);
      await oneEvent(running, target, dataSize, 0); // warm-up, not counted
      const before = { ...counts };
      const times: number[] = [];
      let byReference = 0;
      for (let i = 1; i <= EVENTS_PER_CASE; i++) {
        const { ms, byReference: ref } = await oneEvent(running, target, dataSize, i);
        times.push(ms);
        if (ref) byReference++;
      }
      times.sort((a, b) => a - b);
      const per = (key: keyof typeof counts) => Number(((counts[key] - before[key]) / EVENTS_PER_CASE).toFixed(2));
      return {
        events: EVENTS_PER_CASE,
        deliveredByReference: byReference,
        msPerEventP50: Number(times[Math.floor(times.length / 2)]!.toFixed(1)),
        msPerEventMean: Number((times.reduce((a, b) => a + b, 0) / times.length).toFixed(1)),
        awsRequestsPerEvent: { dynamodb: per('dynamodb'), sqs: per('sqs'), s3: per('s3') },
        s3BytesPerEvent: { written: per('s3BytesWritten'), read: per('s3BytesRead') },
      };
    };

    const cases: Record<string, unknown> = {};
    for (const [label, size] of Object.entries(DATA_SIZES)) {
      const claimCheck = await measure(main, undefined, size);
      const inline = await measure(main, 2 * 1024 * 1024, size);
      const withoutClaimCheck = size < 200 * 1024 ? await measure(noClaimCheck, undefined, size) : undefined;
      cases[label] = {
        dataBytes: size,
        claimCheck,
        inline,
        ...(withoutClaimCheck ? { inlineWithoutClaimCheck: withoutClaimCheck } : {}),
        msRatioClaimCheckToInline: Number((claimCheck.msPerEventP50 / inline.msPerEventP50).toFixed(2)),
      };
    }
    return {
      description:
        'Per event, publish to data in the receiver’s hands: by reference (dataref, then GET /payloads/{id}) next to inline delivery of the same events (the delivery function reads the object back), same host, same run, one event at a time.',
      cases,
    };
  } finally {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await agent.close();
    for (const host of hosts) await host.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
