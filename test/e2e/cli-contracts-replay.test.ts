/**
 * The `koerier` CLI's writes to the contract register and its replay cancel, against the whole
 * laptop host (issue 16 item 1; issue 14's register: EDU-6, EDU-21, EDU-22; replays: EDU-18): a
 * contract published from a file with its owner and contact point, an invalid document refused with
 * the parser's findings, a breaking change refused and then forced by an admin, a version
 * deprecated, and a running replay cancelled. The gateway's own answers are checked over HTTP beside
 * what the CLI prints, so a CLI that only printed the right words would fail.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { ARCHIVE_PREFIX, decodeArchiveObject } from '../../functions/core/replay/archive-format.js';
import { enrolmentContract, enrolmentPayload } from '../support/contract-documents.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { startAnswerDroppingProxy } from '../support/answer-dropping-proxy.js';
import { cliUser, createPushSubscription, startListen, type CliUser } from '../support/koerier-cli.js';
import { eventually, staysQuiet } from '../support/waiting.js';

// Every CLI run is a process start (about a second, several under load on two cores), and most tests make several.
vi.setConfig({ testTimeout: 90_000 });

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:cli-replay';

let koerier: TestHost;
let cli: CliUser;
/** dev-publisher holds every scope on the laptop, admin included. */
let operator: Record<string, string>;
let subscriber: Record<string, string>;

beforeAll(async () => {
  // The ingest reads contract bindings again every second here (30 s by default), so a binding takes effect within the test's patience.
  koerier = await startTestHost({ [settingEnv.partnersRefreshSeconds]: '1' });
  cli = await cliUser(koerier.url);
  const secret = (client: string) => koerier.host.localConfig.clients[client]!.secret;
  operator = { KOERIER_CLIENT_ID: 'dev-publisher', KOERIER_CLIENT_SECRET: secret('dev-publisher') };
  subscriber = { KOERIER_CLIENT_ID: 'dev-subscriber', KOERIER_CLIENT_SECRET: secret('dev-subscriber') };
}, 60_000);
afterAll(async () => {
  await cli?.remove();
  await koerier?.stop();
});

async function file(name: string, content: string): Promise<string> {
  const path = join(cli.cwd, `${randomUUID()}-${name}`);
  await writeFile(path, content);
  return path;
}

async function register(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const token = await koerier.token('dev-subscriber', ['contracts:read']);
  const answer = await fetch(`${koerier.url}/contracts${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

const OWNER = [
  '--owner',
  'Stichting Onderwijsdata',
  '--owner-email',
  'contracten@example.org',
  '--contact',
  'Team Koppelingen',
  '--contact-url',
  'https://example.org/contact',
];

describe('koerier contracts publish', () => {
  it("EDU-6, EDU-21, EDU-22: publishes an AsyncAPI file with its owner and contact point; the kind is read from the document, the checksum is the file's own, the same file again changes nothing", async () => {
    const text = JSON.stringify(enrolmentContract(enrolmentPayload()), null, 2);
    const path = await file('enrolments.json', text);
    const published = await cli.run(
      ['contracts', 'publish', 'cli-enrolments', '1.0.0', path, ...OWNER, '--description', 'Inschrijvingen'],
      { env: operator },
    );
    expect(published.code, published.stderr).toBe(0);
    const checksum = `sha-256=:${createHash('sha256').update(text).digest('base64')}:`;
    expect(published.stdout).toContain('Published cli-enrolments 1.0.0');
    expect(published.stdout).toContain(`checksum    ${checksum} (the file as sent)`);
    expect(published.stdout).toContain('compatibility: the first version');

    const contract = await register('/cli-enrolments');
    expect(contract.status).toBe(200);
    expect(contract.body).toMatchObject({
      kind: 'asyncapi-data',
      description: 'Inschrijvingen',
      owner: { name: 'Stichting Onderwijsdata', email: 'contracten@example.org' },
      contact: { name: 'Team Koppelingen', url: 'https://example.org/contact' },
      latestVersion: '1.0.0',
      versions: [{ version: '1.0.0', status: 'active', checksum, eventTypes: ['nl.edu.enrolment.created.v1'] }],
    });

    const again = await cli.run(['contracts', 'publish', 'cli-enrolments', '1.0.0', path, '--json'], { env: operator });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ version: '1.0.0', checksum });
  });

  it("EDU-21: an invalid document is refused (400) with each of the parser's findings on a line of its own, exit 1, and nothing is registered", async () => {
    const path = await file(
      'broken.json',
      JSON.stringify({ asyncapi: '3.0.0', info: { title: 'Broken' }, channels: { c: { address: 1 } } }),
    );
    const refused = await cli.run(['contracts', 'publish', 'cli-broken', '1.0.0', path, ...OWNER], { env: operator });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('400 Invalid Contract Document (contract-document-invalid)');
    const findings = refused.stderr.split('\n').filter((line) => line.startsWith('  - '));
    expect(findings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ {2}- \/info: .*version.* \(asyncapi, EDU-21\)$/),
        expect.stringMatching(/^ {2}- \/channels\/c\/address: .*string/),
      ]),
    );
    expect((await register('/cli-broken')).status).toBe(404);
  });

  it('EDU-22: a new contract without its owner is refused by the register; a file whose kind cannot be told is a usage error before anything is sent', async () => {
    const path = await file('nameless.json', JSON.stringify(enrolmentContract(enrolmentPayload())));
    const ownerless = await cli.run(['contracts', 'publish', 'cli-ownerless', '1.0.0', path], { env: operator });
    expect(ownerless.code).toBe(1);
    expect(ownerless.stderr).toContain('owner and contact point (EDU-22)');
    const half = await cli.run(['contracts', 'publish', 'cli-ownerless', '1.0.0', path, '--owner', 'Nobody'], {
      env: operator,
    });
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('--owner NAME goes with --owner-email and/or --owner-url');
    const unknown = await cli.run(
      ['contracts', 'publish', 'cli-ownerless', '1.0.0', await file('other.json', '{"swagger":"2.0"}'), ...OWNER],
      {
        env: operator,
      },
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('give --kind');
    expect((await register('/cli-ownerless')).status).toBe(404);
  });

  it('issue 14 item 2: a compatible change prints its verdict; a breaking change within the major version is refused (422, exit 1) with its findings, then forced with --force by an admin (not by a token without the admin scope: 403, exit 3) and recorded as forced', async () => {
    const name = 'cli-compat';
    const first = await cli.run(
      [
        'contracts',
        'publish',
        name,
        '1.0.0',
        await file('v1.json', JSON.stringify(enrolmentContract(enrolmentPayload()))),
        ...OWNER,
      ],
      {
        env: operator,
      },
    );
    expect(first.code, first.stderr).toBe(0);
    const widened = enrolmentContract(enrolmentPayload({ level: { enum: ['vo', 'mbo', 'hbo', 'wo'] } }));
    const compatible = await cli.run(
      ['contracts', 'publish', name, '1.1.0', await file('v1.1.json', JSON.stringify(widened))],
      { env: operator },
    );
    expect(compatible.code, compatible.stderr).toBe(0);
    expect(compatible.stdout).toContain('compatibility with 1.0.0: backward');
    expect(compatible.stdout).toContain('enrolled: backward');

    const typeChange = await file(
      'v1.2.json',
      JSON.stringify(enrolmentContract(enrolmentPayload({ student: { type: 'integer' } }))),
    );
    const refused = await cli.run(['contracts', 'publish', name, '1.2.0', typeChange], { env: operator });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('422 Breaking Change (contract-change-breaking)');
    expect(refused.stderr).toMatch(/ {2}- \/student: .* \(type-changed, EDU-21\)/);
    expect(refused.stderr).toContain('an admin may publish this one anyway with --force');
    expect((await register(`/${name}/versions/1.2.0`)).status).toBe(404);

    // The same client asking for the register's scopes only (least privilege) is no admin: --force is refused (403, exit 3).
    const notAdmin = await cli.run(
      ['--scope', 'contracts:read contracts:write', 'contracts', 'publish', name, '1.2.0', typeChange, '--force'],
      {
        env: operator,
      },
    );
    expect(notAdmin.code).toBe(3);
    expect(notAdmin.stderr).toContain('Only a client with the admin scope may force a breaking change.');
    expect((await register(`/${name}/versions/1.2.0`)).status).toBe(404);

    const forced = await cli.run(['contracts', 'publish', name, '1.2.0', typeChange, '--force'], { env: operator });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('compatibility with 1.1.0: breaking, forced by dev-publisher');
    expect(forced.stdout).toContain('- /student (not backward compatible): ');
    expect(forced.stdout).toMatch(/- \/student \(not forward compatible\): .*\(type-changed\)/);
    expect((await register(`/${name}/versions/1.2.0`)).body).toMatchObject({
      compatibility: { previous: '1.1.0', verdict: 'breaking', forcedBy: 'dev-publisher' },
    });
  });

  it('EDU-6: another document under a published version is refused (409, exit 1): a changed document is a new version', async () => {
    const name = 'cli-immutable';
    const first = await cli.run(
      [
        'contracts',
        'publish',
        name,
        '1.0.0',
        await file('a.json', JSON.stringify(enrolmentContract(enrolmentPayload()))),
        ...OWNER,
      ],
      {
        env: operator,
      },
    );
    expect(first.code, first.stderr).toBe(0);
    const changed = await file(
      'b.json',
      JSON.stringify(enrolmentContract(enrolmentPayload({ note: { type: 'string' } }))),
    );
    const refused = await cli.run(['contracts', 'publish', name, '1.0.0', changed], { env: operator });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('409 Contract version immutable (contract-version-immutable)');
  });

  it("EDU-21, EDU-6: a YAML file is sent as its text (its checksum is the YAML file's own), and contracts document gives those bytes back", async () => {
    const text = toYaml(enrolmentContract(enrolmentPayload()));
    const published = await cli.run(
      ['contracts', 'publish', 'cli-yaml', '1.0.0', await file('enrolments.yaml', text), ...OWNER, '--json'],
      { env: operator },
    );
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({
      checksum: `sha-256=:${createHash('sha256').update(text).digest('base64')}:`,
      specVersion: '3.0.0',
      mediaType: 'application/vnd.aai.asyncapi+yaml',
    });
    const fetched = await cli.run(['contracts', 'document', 'cli-yaml', '1.0.0'], { env: operator });
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(fetched.stdout).toBe(text);
  });

  it('EDU-21, issue 14 item 2: a YAML OpenAPI file is published with its YAML media type and served back in it byte for byte; broken YAML is refused (400, exit 1) naming its line', async () => {
    const text = toYaml({
      openapi: '3.1.0',
      info: { title: 'Webhook van de school', version: '1.0.0' },
      webhooks: { leerling: { post: { responses: { '204': { description: 'received' } } } } },
    });
    const published = await cli.run(
      ['contracts', 'publish', 'cli-yaml-hooks', '1.0.0', await file('hooks.yml', text), ...OWNER, '--json'],
      { env: operator },
    );
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({
      mediaType: 'application/vnd.oai.openapi+yaml',
      specVersion: '3.1.0',
    });
    expect((await register('/cli-yaml-hooks')).body).toMatchObject({ kind: 'openapi-webhook' });
    const fetched = await cli.run(['contracts', 'document', 'cli-yaml-hooks', '1.0.0'], { env: operator });
    expect(fetched.stdout).toBe(text);

    const broken = await file('broken.yaml', 'asyncapi: 3.0.0\ninfo:\n  title: x\n  title: y\n');
    const refused = await cli.run(['contracts', 'publish', 'cli-yaml-broken', '1.0.0', broken, ...OWNER], {
      env: operator,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('400 Invalid Contract Document (contract-document-invalid)');
    expect(refused.stderr).toMatch(/ {2}- YAML line 4, column 3: .*DUPLICATE_KEY.*\(asyncapi, EDU-21\)/);
  });

  it('EDU-21: an OpenAPI file is published as a webhook contract, its kind read from the document', async () => {
    const hooks = {
      openapi: '3.1.0',
      info: { title: 'Webhook van de school', version: '1.0.0' },
      webhooks: {
        leerling: {
          post: {
            requestBody: { content: { 'application/cloudevents+json': { schema: { type: 'object' } } } },
            responses: { '204': { description: 'received' } },
          },
        },
      },
    };
    const published = await cli.run(
      ['contracts', 'publish', 'cli-hooks', '1.0.0', await file('hooks.json', JSON.stringify(hooks)), ...OWNER],
      {
        env: operator,
      },
    );
    expect(published.code, published.stderr).toBe(0);
    expect((await register('/cli-hooks')).body).toMatchObject({ kind: 'openapi-webhook', latestVersion: '1.0.0' });
  });

  it('EDU-IDEM-3: a publish whose 201 a proxy turned into a 503 is retried after Retry-After with the same Idempotency-Key; the register replays its answer and stores one version', async () => {
    // A real proxy in front of the gateway: every request goes through; the first 201 to a PUT is dropped for a 503.
    const proxy = await startAnswerDroppingProxy(koerier.url, {
      watch: (method) => method === 'PUT',
      drop: (seen) => seen.at(-1)!.status === 201 && seen.filter((put) => put.status === 201).length === 1,
    });
    const puts = proxy.seen;
    try {
      const path = await file('retried.json', JSON.stringify(enrolmentContract(enrolmentPayload())));
      const published = await cli.run(
        [
          'contracts',
          'publish',
          'cli-retried',
          '1.0.0',
          path,
          ...OWNER,
          '--token-url',
          `${koerier.origin}/oauth/token`,
        ],
        {
          env: { ...operator, KOERIER_URL: proxy.url },
        },
      );
      expect(published.code, published.stderr).toBe(0);
      expect(published.stdout).toContain('Published cli-retried 1.0.0');
      // A register from before YAML documents first refuses the mediaType member (400) and gets the body without it.
      const dropped = puts.findIndex((put) => put.status === 201);
      expect(puts[dropped]).toMatchObject({ replayed: false });
      expect(puts.slice(dropped + 1)).toEqual([{ key: puts[dropped]!.key, status: 201, replayed: true }]);
      expect(puts[dropped]!.key).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await proxy.close();
    }
    expect((await register('/cli-retried/versions')).body['versions']).toHaveLength(1);
  });
});

describe('koerier contracts update and deprecate', () => {
  it("EDU-6, EDU-22: changes a contract's contact point and a version's event types, deprecates a version with its sunset date, and refuses to deprecate without one", async () => {
    const name = 'cli-lifecycle';
    const path = await file('v1.json', JSON.stringify(enrolmentContract(enrolmentPayload())));
    expect((await cli.run(['contracts', 'publish', name, '1.0.0', path, ...OWNER], { env: operator })).code).toBe(0);

    const contact = await cli.run(
      ['contracts', 'update', name, '--contact', 'Servicedesk', '--contact-email', 'servicedesk@example.org'],
      { env: operator },
    );
    expect(contact.code, contact.stderr).toBe(0);
    expect(contact.stdout).toContain(`Updated ${name}.`);
    const types = await cli.run(
      [
        'contracts',
        'update',
        name,
        '1.0.0',
        '--type',
        'nl.edu.enrolment.created.v1',
        '--type',
        'nl.edu.enrolment.changed.v1',
      ],
      {
        env: operator,
      },
    );
    expect(types.code, types.stderr).toBe(0);

    const noSunset = await cli.run(['contracts', 'update', name, '1.0.0', '--status', 'deprecated'], { env: operator });
    expect(noSunset.code).toBe(1);
    expect(noSunset.stderr).toContain('needs a sunset date');
    const mixed = await cli.run(
      ['contracts', 'update', name, '1.0.0', '--owner', 'X', '--owner-url', 'https://example.org'],
      { env: operator },
    );
    expect(mixed.code).toBe(2);

    const deprecated = await cli.run(['contracts', 'deprecate', name, '1.0.0', '--sunset', '2027-06-01'], {
      env: operator,
    });
    expect(deprecated.code, deprecated.stderr).toBe(0);
    expect(deprecated.stdout).toContain(`Deprecated ${name} 1.0.0: deprecated, sunset 2027-06-01T00:00:00.000Z`);

    const contract = await register(`/${name}`);
    expect(contract.body).toMatchObject({
      contact: { name: 'Servicedesk', email: 'servicedesk@example.org' },
      owner: { name: 'Stichting Onderwijsdata' },
      versions: [
        {
          version: '1.0.0',
          status: 'deprecated',
          sunset: '2027-06-01T00:00:00.000Z',
          eventTypes: ['nl.edu.enrolment.created.v1', 'nl.edu.enrolment.changed.v1'],
        },
      ],
    });
    const shown = await cli.run(['contracts', 'show', name], { env: operator });
    expect(shown.stdout).toMatch(/│ contact +│ Servicedesk <servicedesk@example\.org> +│/);
    expect(shown.stdout).toMatch(
      /│ 1\.0\.0 +│ deprecated +│ 2027-06-01T00:00:00\.000Z +│ nl\.edu\.enrolment\.created\.v1, nl\.edu\.enrolment\.changed\.v1/,
    );
    const unknown = await cli.run(['contracts', 'deprecate', name, '9.9.9', '--sunset', '2027-06-01'], {
      env: operator,
    });
    expect(unknown.code).toBe(4);
  });
});

describe('koerier contracts bind', () => {
  it('issue 14 item 3, EDU-21: binds an event type to a message of a contract in enforce mode: koerier send of data that breaks the schema exits 1 naming the JSON Pointer; after unbind it is accepted', async () => {
    const type = 'nl.edu.cli.bound.v1';
    const published = await cli.run(
      [
        'contracts',
        'publish',
        'cli-bound',
        '1.0.0',
        await file('bound.json', JSON.stringify(enrolmentContract(enrolmentPayload()))),
        ...OWNER,
      ],
      {
        env: operator,
      },
    );
    expect(published.code, published.stderr).toBe(0);
    const bound = await cli.run(['contracts', 'bind', type, 'cli-bound', '1.0.0', '--message', 'enrolled'], {
      env: operator,
    });
    expect(bound.code, bound.stderr).toBe(0);
    expect(bound.stdout).toBe(`Bound ${type} to cli-bound 1.0.0#enrolled (enforce).\n`);
    const listed = await cli.run(['contracts', 'bindings', '--json'], { env: operator });
    expect(JSON.parse(listed.stdout)).toContainEqual(
      expect.objectContaining({ type, contract: 'cli-bound', version: '1.0.0', message: 'enrolled', mode: 'enforce' }),
    );

    const event = (data: unknown) =>
      file(
        'event.json',
        JSON.stringify({
          specversion: '1.0',
          id: randomUUID(),
          source: SOURCE,
          type,
          datacontenttype: 'application/json',
          data,
        }),
      );
    const bad = await event({ student: 's-1', school: 'nope' });
    const refused = await eventually(
      'the binding to take effect at the ingest',
      async () => {
        const run = await cli.run(['send', bad], { env: operator });
        return run.code === 1 ? run : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(refused.stdout).toContain('0 accepted, 1 rejected');
    expect(refused.stdout).toContain('400 Data Contract Violation (data-contract-violation)');
    expect(refused.stdout).toMatch(/- \/data\/school: must match pattern .*\(pattern, EDU-21\)/);
    const good = await cli.run(['send', await event({ student: 's-1', school: '01AB' })], { env: operator });
    expect(good.code, good.stderr).toBe(0);

    const unbound = await cli.run(['contracts', 'unbind', type], { env: operator });
    expect(unbound.code, unbound.stderr).toBe(0);
    await eventually(
      'the unbinding to take effect at the ingest',
      async () => (await cli.run(['send', await event({ school: 'nope' })], { env: operator })).code === 0,
      {
        timeoutMs: 20_000,
      },
    );
    const again = await cli.run(['contracts', 'unbind', type], { env: operator });
    expect(again.code).toBe(4);
  });
});

describe('koerier replay cancel', () => {
  it('EDU-18: cancels a running replay: its state says cancelled, no chunk after the one in flight reaches the target, and a second cancel is refused (409, exit 1)', async () => {
    const type = 'nl.edu.cli.replay.cancel';
    const ids = Array.from({ length: 6 }, () => randomUUID());
    const folder = join(cli.cwd, `replay-${randomUUID()}`);
    await mkdir(folder);
    await Promise.all(
      ids.map((id, n) =>
        writeFile(
          join(folder, `${n}.json`),
          JSON.stringify({ specversion: '1.0', id, source: SOURCE, type, data: { n } }),
        ),
      ),
    );
    const sent = await cli.run(['send', folder, '--mode', 'batch'], { env: operator });
    expect(sent.code, sent.stderr).toBe(0);
    await eventually('the events archived', () => archived(ids), { timeoutMs: 30_000, intervalMs: 500 });

    // Six deliveries a minute: a replay chunk is one event, ten seconds apart, so it is still running when cancelled.
    const { listen, url } = await startListen(cli, ['--rate', '6', '--json']);
    const created = await createPushSubscription(cli, { sink: `${url}hook`, type, origin: koerier.origin, subscriber });
    expect(created.code, created.stderr).toBe(0);
    const subscription = (JSON.parse(created.stdout) as { id: string }).id;
    expect(listen.stderr()).toContain('consented at 6 per minute');

    const started = await cli.run(['replay', 'start', subscription, '--from', '1h', '--json'], { env: subscriber });
    expect(started.code, started.stderr).toBe(0);
    const replay = JSON.parse(started.stdout) as { id: string; state: string };
    expect(replay.state).toBe('running');

    const cancelled = await cli.run(['replay', 'cancel', subscription, replay.id], { env: subscriber });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(
      new RegExp(`^Replay ${replay.id} cancelled: scanned \\d+, matched \\d+, sent \\d+, failed 0\\n$`),
    );

    const deliveries = () => listen.stdout().trim().split('\n').filter(Boolean).length;
    // At most the chunk being queued when the cancel came (one event) arrives; the next would come ten seconds later.
    await staysQuiet('a delivery beyond the chunk in flight', () => deliveries() > 1 && deliveries(), 12_000);
    const shown = await cli.run(['replay', 'show', subscription, replay.id, '--json'], { env: subscriber });
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: replay.id, state: 'cancelled', sent: deliveries() });

    const again = await cli.run(['replay', 'cancel', subscription, replay.id], { env: subscriber });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('409 Replay not running (replay-not-running)');
    const unknown = await cli.run(['replay', 'cancel', subscription, randomUUID()], { env: subscriber });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).not.toContain('not yet available');
    await listen.stop();
  });
});

/** Whether every one of `ids` is in the archive: the router archives a batch before it routes it. */
async function archived(ids: readonly string[]): Promise<boolean> {
  const archive = koerier.host.dependencies.eventArchive;
  const keys = await archive.list(ARCHIVE_PREFIX);
  const objects = await Promise.all(keys.map((key) => archive.get(key)));
  const found = new Set(objects.flatMap((body) => (body ? decodeArchiveObject(body) : [])).map((event) => event.id));
  return ids.every((id) => found.has(id));
}
