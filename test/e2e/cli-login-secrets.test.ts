/**
 * Where the `koerier` CLI sends a client secret (issue 28, item 10): only to an https token URL
 * (http on loopback only), to the token URL `login` pinned for the profile's gateway, and never to
 * one another gateway names. Real servers throughout: the laptop host, and gateways that are not it
 * (test/support/recording-gateway.ts) recording every request they get.
 */
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestHost, type TestHost } from '../support/host.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';
import { nonLoopbackAddress, startRecordingGateway, type RecordingGateway } from '../support/recording-gateway.js';

// Every CLI run is a process start (about a second, several under load on two cores).
vi.setConfig({ testTimeout: 60_000 });

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';

let koerier: TestHost;
let cli: CliUser;
let secret: string;
const gateways: RecordingGateway[] = [];

beforeAll(async () => {
  koerier = await startTestHost();
  cli = await cliUser(koerier.url);
  secret = koerier.host.localConfig.clients['dev-publisher']!.secret;
  await writeFile(
    join(cli.cwd, 'event.json'),
    JSON.stringify({ specversion: '1.0', id: randomUUID(), source: SOURCE, type: 'nl.edu.cli.secrets' }),
  );
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
});
afterAll(async () => {
  await cli?.remove();
  await koerier?.stop();
});

async function gateway(options: Parameters<typeof startRecordingGateway>[0]): Promise<RecordingGateway> {
  const started = await startRecordingGateway(options);
  gateways.push(started);
  return started;
}

/** `koerier login` as dev-publisher into `profile`, the secret from the environment (the profile stores it). */
async function login(profile: string, url: string): Promise<void> {
  const result = await cli.run(['login', '--profile', profile, '--client-id', 'dev-publisher'], {
    env: { KOERIER_URL: url, KOERIER_CLIENT_SECRET: secret },
  });
  expect(result.code, result.stderr).toBe(0);
}

/** What reached a gateway carrying the secret or any token: an Authorization header or the secret in a body. */
const credentialsSeenBy = (recording: RecordingGateway) =>
  recording.requests.filter((request) => request.authorization !== undefined || request.body.includes(secret));

describe('koerier login: where the client secret goes (issue 28, item 10)', () => {
  it('EDU-2, issue 28 item 10: a token URL over plain http to a host that is not loopback is refused before the secret is sent, whether a gateway names it or the user gives it', async () => {
    // A token endpoint reached over the network, as a remote host is: this machine's own external
    // address, or where there is none a name that resolves nowhere (then only the refusal shows).
    const address = nonLoopbackAddress();
    const remote = address === undefined ? undefined : await gateway({ host: address });
    const tokenUrl = remote ? `${remote.origin}/oauth/token` : 'http://token.example.invalid/oauth/token';
    const describing = await gateway({ names: () => tokenUrl });

    const named = await cli.run(['login', '--profile', 'plain', '--client-id', 'dev-publisher'], {
      env: { KOERIER_URL: describing.url, KOERIER_CLIENT_SECRET: secret },
    });
    expect(named.stderr).toContain(`refusing to send a client secret to ${tokenUrl}: a token URL must be https`);
    expect(named.code).toBe(2);
    const given = await cli.run(
      ['login', '--profile', 'plain', '--client-id', 'dev-publisher', '--token-url', tokenUrl],
      {
        env: { KOERIER_CLIENT_SECRET: secret },
      },
    );
    expect(given.stderr).toContain(`refusing to send a client secret to ${tokenUrl}`);
    expect(given.code).toBe(2);
    if (remote) expect(remote.requests).toEqual([]);
    // Loopback over http stays allowed: the laptop's own token URL (http://127.0.0.1:…/oauth/token).
    await login('plain', koerier.url);
  });

  it('EDU-2, issue 28 item 10: login pins the token URL; when the gateway later names another, a command with the profile still sends the secret to the pinned one, however the gateway URL is written', async () => {
    const evil = await gateway({ names: (self) => `${self.origin}/oauth/token` });
    // The profile's gateway, reached through a proxy that can change what its API description says.
    const proxy = await gateway({ forwardTo: koerier.origin });
    await login('pinned', proxy.url);
    proxy.namesTokenUrl(`${evil.origin}/oauth/token`);
    // No cached token: the next command must fetch one with the stored secret.
    await rm(join(cli.configDir, 'tokens.json'), { force: true });

    for (const written of [proxy.url, `${proxy.url}/`, proxy.url.replace('http://', 'HTTP://')]) {
      const sent = await cli.run(['send', 'event.json', '--profile', 'pinned'], { env: { KOERIER_URL: written } });
      expect(sent.code, `${written}: ${sent.stderr}`).toBe(0);
      expect(sent.stdout).toContain('1 accepted');
    }
    expect(evil.requests).toEqual([]);
    expect(proxy.requests.filter((request) => request.path.endsWith('/openapi.json'))).toHaveLength(1); // only login's
  });

  it('EDU-2, issue 28 item 10: a command pointed at another gateway gets neither the stored secret nor a cached token: it says to log in for that gateway', async () => {
    await login('home', koerier.url);
    // One that names a token endpoint of its own, and one that names the real one (to be handed the real token).
    const ownEndpoint = await gateway({ names: (self) => `${self.origin}/oauth/token` });
    const realEndpoint = await gateway({ names: () => `${koerier.origin}/oauth/token` });
    for (const other of [ownEndpoint, realEndpoint]) {
      for (const pointed of [
        { args: ['--url', other.url], env: {} },
        { args: [], env: { KOERIER_URL: other.url } },
      ]) {
        const listed = await cli.run(['subscriptions', 'list', '--profile', 'home', ...pointed.args], {
          env: pointed.env,
        });
        expect(listed.stderr).toContain(`profile home was logged in to ${koerier.url}, not ${other.url}`);
        expect(listed.stderr).toContain(`koerier login --url ${other.url} --profile home`);
        expect(listed.code).toBe(3);
        // send reports it per request, on stdout, and sends nothing either.
        const sent = await cli.run(['send', 'event.json', '--profile', 'home', ...pointed.args], { env: pointed.env });
        expect(sent.stdout).toContain(`profile home was logged in to ${koerier.url}, not ${other.url}`);
        expect(sent.code).not.toBe(0);
      }
      expect(credentialsSeenBy(other)).toEqual([]);
    }
    // The profile's own gateway still works, and a secret given for this run is the user's to send.
    expect((await cli.run(['subscriptions', 'list', '--profile', 'home'])).code).toBe(0);
    const explicit = await cli.run(['subscriptions', 'list', '--profile', 'home', '--url', ownEndpoint.url], {
      env: { KOERIER_CLIENT_SECRET: 'for-this-run' },
    });
    expect(explicit.stderr).not.toContain('was logged in to');
    expect(ownEndpoint.requests.some((request) => request.path === '/oauth/token')).toBe(true);
  });
});
