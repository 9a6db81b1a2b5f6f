/**
 * The contract register on the laptop host (issue 14; EDU-6, EDU-21, EDU-22): the real parsers,
 * dynalite and s3rver behind the register's API, and the ingest checking event data against a
 * bound contract. The functions' refresh interval is 1 s here (30 s by default), so a binding
 * takes effect within the test's patience.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logger } from '../../functions/app/logger.js';
import { settingEnv } from '../../functions/config.js';
import { API_VERSION } from '../../functions/core/api-description/components.js';
import { DynamoDbContractStore } from '../../functions/aws/dynamodb-contract-store.js';
import { localName } from '../../functions/config/resources.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { ENROLMENT_TYPE, enrolmentContract, enrolmentPayload, owner } from '../support/contract-documents.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { eventually } from '../support/waiting.js';
import { problemTypeUri } from '../support/problem-types.js';

let koerier: TestHost;
let writer: string;
let reader: string;
let admin: string;
let publisher: string;
const logLines: string[] = [];
let restoreLogger: (() => void) | undefined;

beforeAll(async () => {
  restoreLogger = logger.captureTo((line) => logLines.push(line));
  koerier = await startTestHost({
    [settingEnv.partnersRefreshSeconds]: '1',
    // Who publishes under which sources: a binding checks its publisher's own events (issue 28, item 7).
    [settingEnv.publishers]: JSON.stringify({
      'dev-publisher': ['urn:nld:oin:0001'],
      'dev-subscriber': [],
      'registry-writer': ['urn:nld:oin:0003'],
      'school-b': ['urn:nld:oin:0002'],
    }),
  });
  writer = await koerier.host.issueToken('registry-writer', ['contracts:read', 'contracts:write']);
  reader = await koerier.host.issueToken('another-partner', ['contracts:read']);
  admin = await koerier.host.issueToken('ops', ['contracts:read', 'contracts:write', 'admin']);
  publisher = await koerier.token('dev-publisher', ['events:publish']);
}, 60_000);
afterAll(async () => {
  restoreLogger?.();
  await koerier?.stop();
});

/** A call as the registry writer unless `token` says otherwise (undefined: anonymous), answered whatever its status. */
function call(
  method: string,
  path: string,
  options: { token?: string | undefined; body?: unknown; key?: string } = {},
) {
  const token = 'token' in options ? options.token : writer;
  return callApi(koerier.url, token, method, path, options.body, options.key ? { 'idempotency-key': options.key } : {});
}

const publishVersion = (name: string, version: string, document: unknown, token = writer, query = '') =>
  call('PUT', `/contracts/${name}/versions/${version}${query}`, {
    token,
    body: { kind: 'asyncapi-data', owner, contact: owner, document },
  });

/**
 * The enrolments versions the tests before a test publish, for a test run on its own (`-t`, issue 36
 * item 10): a version published again with the same document is a 200 that changes nothing, so in
 * file order this publishes nothing new.
 */
async function givenEnrolments(...versions: ('1.0.0' | '1.1.0')[]) {
  const documents = {
    '1.0.0': enrolmentContract(enrolmentPayload()),
    '1.1.0': enrolmentContract(enrolmentPayload({ level: { enum: ['vo', 'mbo', 'hbo', 'wo'] } })),
  };
  for (const version of versions)
    expect([200, 201]).toContain((await publishVersion('enrolments', version, documents[version])).status);
}

async function publishEvent(
  data: unknown,
  batch = false,
  as: { token: string; source: string; type?: string } = { token: publisher, source: 'urn:nld:oin:0001:enrolments' },
) {
  const event = {
    specversion: '1.0',
    id: randomUUID(),
    source: as.source,
    type: as.type ?? ENROLMENT_TYPE,
    datacontenttype: 'application/json',
    data,
  };
  return tryPublish(
    koerier.url,
    as.token,
    batch ? [{ ...event, data: { student: 's1', school: '01AB' } }, event] : event,
  );
}

describe('the contract register (issue 14, EDU-6)', () => {
  it("issue 14 item 4: Koerier's own OpenAPI document is a contract of its register, byte for byte the served /openapi.json", async () => {
    const listed = await call('GET', '/contracts', { token: reader });
    expect(listed.status).toBe(200);
    expect(listed.body['contracts']).toContainEqual(
      expect.objectContaining({ name: 'koerier-webhook', kind: 'openapi-webhook', latestVersion: API_VERSION }),
    );
    const document = await call('GET', `/contracts/koerier-webhook/versions/${API_VERSION}/document`, {
      token: reader,
    });
    expect(document.status).toBe(200);
    expect(document.headers.get('content-type')).toBe('application/vnd.oai.openapi+json');
    const served = await (await fetch(`${koerier.url}/openapi.json`)).text();
    expect(document.text).toBe(served);
  });

  it('EDU-6, EDU-22: a published version is listed, fetched with its metadata, and its document comes back byte for byte', async () => {
    const document = enrolmentContract(enrolmentPayload());
    const published = await publishVersion('enrolments', '1.0.0', document);
    expect(published.status).toBe(201);
    expect(published.headers.get('location')).toMatch(/\/contracts\/enrolments\/versions\/1\.0\.0$/);
    expect(published.body).toMatchObject({
      contract: 'enrolments',
      version: '1.0.0',
      status: 'active',
      eventTypes: [ENROLMENT_TYPE],
      checksum: expect.stringMatching(/^sha-256=:[A-Za-z0-9+/]+=*:$/),
      specVersion: '3.0.0',
      messages: [{ id: 'enrolled', name: ENROLMENT_TYPE, hasPayload: true }],
      publishedBy: 'registry-writer',
    });
    const contract = await call('GET', '/contracts/enrolments', { token: reader });
    expect(contract.body).toMatchObject({
      name: 'enrolments',
      kind: 'asyncapi-data',
      owner,
      contact: owner,
      latestVersion: '1.0.0',
    });
    const versions = await call('GET', '/contracts/enrolments/versions', { token: reader });
    expect((versions.body['versions'] as { version: string }[]).map((version) => version.version)).toEqual(['1.0.0']);
    const one = await call('GET', '/contracts/enrolments/versions/1.0.0', { token: reader });
    expect(one.body['checksum']).toBe(published.body['checksum']);
    const text = await call('GET', '/contracts/enrolments/versions/1.0.0/document', { token: reader });
    expect(text.headers.get('content-type')).toBe('application/vnd.aai.asyncapi+json');
    expect(text.text).toBe(JSON.stringify(document));
    expect(text.headers.get('repr-digest')).toBe(published.body['checksum']);
  });

  it('EDU-6: a version is immutable: the same document again is 200 unchanged, another document under the same version 409', async () => {
    await givenEnrolments('1.0.0');
    const again = await publishVersion('enrolments', '1.0.0', enrolmentContract(enrolmentPayload()));
    expect(again.status).toBe(200);
    const changed = await publishVersion(
      'enrolments',
      '1.0.0',
      enrolmentContract(enrolmentPayload({ nickname: { type: 'string' } })),
    );
    expect(changed.status).toBe(409);
    expect(changed.body['type']).toBe(problemTypeUri('contract-version-immutable'));
  });

  it("EDU-21: an invalid AsyncAPI document is refused with 400 listing the parser's findings, and nothing is stored", async () => {
    const broken = { asyncapi: '3.0.0', info: { title: 'Broken' }, channels: { c: { address: 1 } } };
    const refused = await publishVersion('broken', '1.0.0', broken);
    expect(refused.status).toBe(400);
    expect(refused.body['type']).toBe(problemTypeUri('contract-document-invalid'));
    expect(refused.body['errors']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rule: 'asyncapi',
          requirement: 'EDU-21',
          attribute: '/info',
          message: expect.stringContaining('version'),
        }),
        expect.objectContaining({ attribute: '/channels/c/address', message: expect.stringContaining('string') }),
      ]),
    );
    expect((await call('GET', '/contracts/broken', { token: reader })).status).toBe(404);
  });

  it('EDU-21: an invalid OpenAPI document, and an AsyncAPI 2 document, are refused with the findings', async () => {
    const openApi = await call('PUT', '/contracts/hooks/versions/1.0.0', {
      body: {
        kind: 'openapi-webhook',
        owner,
        contact: owner,
        document: { openapi: '3.1.0', info: { title: 'hooks' }, paths: {} },
      },
    });
    expect(openApi.status).toBe(400);
    expect(openApi.body['errors']).toContainEqual(
      expect.objectContaining({ rule: 'openapi', message: expect.stringContaining("'version'") }),
    );
    const old = await publishVersion('old-style', '1.0.0', {
      asyncapi: '2.6.0',
      info: { title: 'x', version: '1' },
      channels: {},
    });
    expect(old.status).toBe(400);
    expect(JSON.stringify(old.body['errors'])).toContain('3.x');
  });

  it('EDU-21: an external $ref is not followed: the document is refused, nothing is fetched', async () => {
    const document = enrolmentContract({ $ref: 'http://169.254.169.254/latest/meta-data' });
    const refused = await publishVersion('external-ref', '1.0.0', document);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body['errors'])).toContain('not followed');
  });

  it('EDU-21: an OpenAPI document with an external $ref (a relative path here) is refused, the finding pointing at the reference', async () => {
    const hooks = {
      openapi: '3.1.0',
      info: { title: 'hooks', version: '1.0.0' },
      paths: {},
      webhooks: {
        enrolled: {
          post: { requestBody: { $ref: './bodies.yaml#/enrolled' }, responses: { '200': { description: 'ok' } } },
        },
      },
    };
    const refused = await call('PUT', '/contracts/external-hooks/versions/1.0.0', {
      body: { kind: 'openapi-webhook', owner, contact: owner, document: hooks },
    });
    expect(refused.status).toBe(400);
    expect(refused.body['errors']).toEqual([
      expect.objectContaining({
        rule: 'openapi',
        attribute: '/webhooks/enrolled/post/requestBody/$ref',
        message: expect.stringContaining('external reference "./bodies.yaml#/enrolled" is not followed'),
      }),
    ]);
  });

  it('issue 14 item 2: compatible changes are published with their verdict; a breaking one within the major version is 422, forced only by an admin', async () => {
    await givenEnrolments('1.0.0');
    const widened = await publishVersion(
      'enrolments',
      '1.1.0',
      enrolmentContract(enrolmentPayload({ level: { enum: ['vo', 'mbo', 'hbo', 'wo'] } })),
    );
    expect(widened.status).toBe(201);
    expect(widened.body['compatibility']).toMatchObject({
      previous: '1.0.0',
      verdict: 'backward',
      messages: [{ message: 'enrolled', verdict: 'backward' }],
    });

    const typeChange = enrolmentContract(enrolmentPayload({ student: { type: 'integer' } }));
    const refused = await publishVersion('enrolments', '1.2.0', typeChange);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ type: problemTypeUri('contract-change-breaking') });
    expect(refused.body['errors']).toContainEqual(
      expect.objectContaining({ rule: 'type-changed', attribute: '/student' }),
    );
    expect((await call('GET', '/contracts/enrolments/versions/1.2.0', { token: reader })).status).toBe(404);

    expect((await publishVersion('enrolments', '1.2.0', typeChange, writer, '?force=true')).status).toBe(403);
    const forced = await publishVersion('enrolments', '1.2.0', typeChange, admin, '?force=true');
    expect(forced.status).toBe(201);
    expect(forced.body['compatibility']).toMatchObject({ verdict: 'breaking', forcedBy: 'ops' });

    const major = await publishVersion(
      'enrolments',
      '2.0.0',
      enrolmentContract(enrolmentPayload({ student: { type: 'boolean' } })),
    );
    expect(major.status).toBe(201);
    expect(major.body['compatibility']).toMatchObject({ previous: '1.2.0', verdict: 'breaking' });
    expect(major.body['compatibility']).not.toHaveProperty('forcedBy');
  });

  it('EDU-6, EDU-22: metadata changes: the owner of a contract, the status of a version (deprecated needs a sunset date); retired is final', async () => {
    await givenEnrolments('1.0.0');
    const newOwner = { name: 'Edu-V', url: 'https://edu-v.example.org' };
    const changed = await call('PATCH', '/contracts/enrolments', { body: { owner: newOwner } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ owner: newOwner, contact: owner, updatedBy: 'registry-writer' });

    expect(
      (await call('PATCH', '/contracts/enrolments/versions/1.0.0', { body: { status: 'deprecated' } })).status,
    ).toBe(400);
    const deprecated = await call('PATCH', '/contracts/enrolments/versions/1.0.0', {
      body: { status: 'deprecated', sunset: '2027-06-30' },
    });
    expect(deprecated.status).toBe(200);
    expect(deprecated.body).toMatchObject({ status: 'deprecated', sunset: '2027-06-30T00:00:00.000Z' });
    // The lifecycle hook (operational events, work/opsinsight) logs until it is wired.
    expect(
      logLines.some((line) => line.includes('contract version deprecated') && line.includes('"contract":"enrolments"')),
    ).toBe(true);

    expect((await call('PATCH', '/contracts/enrolments/versions/1.0.0', { body: { status: 'retired' } })).status).toBe(
      200,
    );
    const back = await call('PATCH', '/contracts/enrolments/versions/1.0.0', { body: { status: 'active' } });
    expect(back.status).toBe(409);
    expect(back.body['type']).toBe(problemTypeUri('contract-status-move'));
  });

  it('EDU-6: reading needs contracts:read, changing contracts:write; another client reads what one published; a token without the scope is 403', async () => {
    await givenEnrolments('1.0.0');
    expect((await call('GET', '/contracts', { token: undefined })).status).toBe(401);
    expect((await call('GET', '/contracts', { token: publisher })).status).toBe(403);
    expect((await call('GET', '/contracts/enrolments/versions/1.0.0', { token: reader })).status).toBe(200);
    const readOnly = await publishVersion('readers-own', '1.0.0', enrolmentContract(enrolmentPayload()), reader);
    expect(readOnly.status).toBe(403);
    expect((await call('PATCH', '/contracts/enrolments', { token: reader, body: { description: 'x' } })).status).toBe(
      403,
    );
    expect(
      (
        await call('PUT', `/contract-bindings/${ENROLMENT_TYPE}`, {
          token: reader,
          body: { contract: 'enrolments', version: '1.1.0', mode: 'enforce' },
        })
      ).status,
    ).toBe(403);
  });

  it('EDU-6, issue 14: another client with contracts:write may not publish a version of, change, bind or unbind a contract it does not maintain; its maintainer and an operator may', async () => {
    const otherWriter = await koerier.host.issueToken('other-writer', ['contracts:read', 'contracts:write']);
    const name = `maintained-${randomUUID().slice(0, 8)}`;
    const type = `nl.edu.maintained.${randomUUID().slice(0, 8)}.v1`;
    expect((await publishVersion(name, '1.0.0', enrolmentContract(enrolmentPayload()))).status).toBe(201);
    expect((await call('GET', `/contracts/${name}`, { token: reader })).body).toMatchObject({
      maintainer: 'registry-writer',
    });

    const refusals = [
      await publishVersion(name, '1.1.0', enrolmentContract(enrolmentPayload(), '1.1.0'), otherWriter),
      await call('PATCH', `/contracts/${name}`, { token: otherWriter, body: { description: 'taken over' } }),
      await call('PATCH', `/contracts/${name}/versions/1.0.0`, {
        token: otherWriter,
        body: { status: 'deprecated', sunset: '2030-01-01T00:00:00Z' },
      }),
      await call('PUT', `/contract-bindings/${type}`, {
        token: otherWriter,
        body: { contract: name, version: '1.0.0', mode: 'enforce' },
      }),
    ];
    for (const refusal of refusals) {
      expect(refusal.status).toBe(403);
      expect(refusal.body['detail']).toBe(
        `Contract "${name}" is maintained by client "registry-writer": only its maintainer or an operator (admin) may change it or bind it.`,
      );
    }
    expect((await call('GET', `/contracts/${name}/versions/1.1.0`, { token: reader })).status).toBe(404);
    expect((await call('GET', `/contracts/${name}/versions/1.0.0`, { token: reader })).body).toMatchObject({
      status: 'active',
    });

    // The maintainer binds; another writer can neither take the type over with its own contract nor unbind it.
    expect(
      (await call('PUT', `/contract-bindings/${type}`, { body: { contract: name, version: '1.0.0', mode: 'warn' } }))
        .status,
    ).toBe(200);
    const own = `others-${randomUUID().slice(0, 8)}`;
    expect((await publishVersion(own, '1.0.0', enrolmentContract(enrolmentPayload()), otherWriter)).status).toBe(201);
    expect(
      (
        await call('PUT', `/contract-bindings/${type}`, {
          token: otherWriter,
          body: { contract: own, version: '1.0.0', mode: 'enforce' },
        })
      ).status,
    ).toBe(403);
    expect((await call('DELETE', `/contract-bindings/${type}`, { token: otherWriter })).status).toBe(403);
    expect((await call('GET', `/contract-bindings/${type}`, { token: reader })).body).toMatchObject({
      contract: name,
      mode: 'warn',
    });

    expect((await call('PATCH', `/contracts/${name}`, { body: { description: 'by its maintainer' } })).status).toBe(
      200,
    );
    expect(
      (await call('PATCH', `/contracts/${name}`, { token: admin, body: { description: 'by an operator' } })).status,
    ).toBe(200);
    expect((await call('DELETE', `/contract-bindings/${type}`, { token: admin })).status).toBe(204);
  });

  it("EDU-21, EDU-IN, issue 28: a contract bound by one publisher checks only that publisher's events; a client granted no source may not bind; the publisher whose events a binding from before the rule refuses removes it", async () => {
    const suffix = randomUUID().slice(0, 8);
    const type = `nl.edu.taken.${suffix}.v1`;
    const schoolB = await koerier.host.issueToken('school-b', ['contracts:read', 'contracts:write', 'events:publish']);
    const ownPublisher = await koerier.token('dev-publisher', ['contracts:read', 'contracts:write']);
    const stranger = await koerier.host.issueToken('no-sources', ['contracts:read', 'contracts:write']);
    const refuseAll = { ...enrolmentContract({ not: {} }) };
    const bindTo = (contract: string, token: string, to = type) =>
      call('PUT', `/contract-bindings/${to}`, {
        token,
        body: { contract, version: '1.0.0', mode: 'enforce', message: 'enrolled' },
      });
    const sendAs = (token: string, source: string, to = type) =>
      publishEvent({ student: 's1', school: '01AB' }, false, { token, source, type: to });

    // The finding: a client that publishes nothing binds {"not": {}} to another's type. Now 403, and nothing is bound.
    expect((await publishVersion(`stranger-${suffix}`, '1.0.0', refuseAll, stranger)).status).toBe(201);
    const taken = await bindTo(`stranger-${suffix}`, stranger);
    expect(taken.status).toBe(403);
    expect(taken.body['detail']).toContain('granted no source');
    expect((await call('GET', `/contract-bindings/${type}`, { token: reader })).status).toBe(404);

    // A publisher binds for its own events: its own are refused, another publisher's of the same type are not.
    expect((await publishVersion(`school-b-${suffix}`, '1.0.0', refuseAll, schoolB)).status).toBe(201);
    const bound = await bindTo(`school-b-${suffix}`, schoolB);
    expect(bound.status).toBe(200);
    expect(bound.body).toMatchObject({ type, scope: 'publisher', publisher: 'school-b' });
    await eventually(
      'the binding to reach the ingest',
      async () => (await sendAs(schoolB, 'urn:nld:oin:0002:lvs')).status === 400,
    );
    expect((await sendAs(publisher, 'urn:nld:oin:0001:lvs')).status).toBe(202);
    // Another publisher neither removes nor replaces it.
    expect((await call('DELETE', `/contract-bindings/${type}`, { token: ownPublisher })).status).toBe(403);

    // A binding made before the rule (no scope) checks every publisher's events; the publisher it refuses removes it.
    const before = `nl.edu.before.${suffix}.v1`;
    await new DynamoDbContractStore(koerier.host.awsClients.dynamodb, localName.table('contracts')).putBinding({
      type: before,
      contract: `stranger-${suffix}`,
      version: '1.0.0',
      message: 'enrolled',
      mode: 'enforce',
      updatedAt: new Date().toISOString(),
      updatedBy: 'no-sources',
    });
    await eventually(
      'the old binding to reach the ingest',
      async () => (await sendAs(publisher, 'urn:nld:oin:0001:lvs', before)).status === 400,
    );
    expect((await call('DELETE', `/contract-bindings/${before}`, { token: ownPublisher })).status).toBe(204);
    await eventually(
      'the removal to reach the ingest',
      async () => (await sendAs(publisher, 'urn:nld:oin:0001:lvs', before)).status === 202,
    );
  });

  it('EDU-IDEM-3: publishing needs an Idempotency-Key, and a retry with the same key replays the first answer', async () => {
    const key = randomUUID();
    const body = enrolmentContract(enrolmentPayload(), '1.1.1');
    const first = await call('PUT', '/contracts/enrolments/versions/1.1.1', {
      key,
      body: { kind: 'asyncapi-data', document: body },
    });
    const replay = await call('PUT', '/contracts/enrolments/versions/1.1.1', {
      key,
      body: { kind: 'asyncapi-data', document: body },
    });
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const missing = await fetch(`${koerier.url}/contracts/enrolments/versions/1.1.2`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'asyncapi-data', document: body }),
    });
    expect(missing.status).toBe(400);
  });
});

describe('contracts at work: the ingest checks data against the bound contract (issue 14 item 3)', () => {
  // An operator's binding checks every publisher's events (issue 28, item 7).
  const bind = async (mode: string) => {
    await givenEnrolments('1.0.0', '1.1.0');
    return call('PUT', `/contract-bindings/${ENROLMENT_TYPE}`, {
      token: admin,
      body: { contract: 'enrolments', version: '1.1.0', mode },
    });
  };

  it('issue 14 item 3: with enforce, data that breaks the schema is 400 with the violations as JSON Pointers; valid data is 202', async () => {
    const bound = await bind('enforce');
    expect(bound.status).toBe(200);
    expect(bound.body).toMatchObject({
      type: ENROLMENT_TYPE,
      contract: 'enrolments',
      version: '1.1.0',
      message: 'enrolled',
      mode: 'enforce',
    });
    const refused = await eventually('the enforce binding to reach the ingest', async () => {
      const answer = await publishEvent({ school: 'nope', level: 'kindergarten' });
      return answer.status === 400 ? answer : undefined;
    });
    expect(refused.body).toMatchObject({ type: problemTypeUri('data-contract-violation'), status: 400 });
    const errors = refused.body['errors'] as { pointer: string; rule: string; requirement: string }[];
    expect(errors.map((error) => [error.pointer, error.rule])).toEqual(
      expect.arrayContaining([
        ['/data/student', 'required'],
        ['/data/school', 'pattern'],
        ['/data/level', 'enum'],
      ]),
    );
    expect(errors.every((error) => error.requirement === 'EDU-21')).toBe(true);
    expect((await publishEvent({ student: 's1', school: '01AB', level: 'wo' })).status).toBe(202);
  });

  it('issue 14 item 3: with enforce, one bad member refuses the whole batch and the finding names its index', async () => {
    const refused = await publishEvent({ student: 5, school: '01AB' }, true);
    expect(refused.status).toBe(400);
    expect(refused.body['errors']).toEqual([
      expect.objectContaining({ index: 1, pointer: '/data/student', rule: 'type' }),
    ]);
  });

  it('issue 14 item 3: with warn, the same event is accepted (202) with the findings as warnings', async () => {
    expect((await bind('warn')).status).toBe(200);
    const accepted = await eventually('the warn binding to reach the ingest', async () => {
      const answer = await publishEvent({ school: '01AB' });
      return answer.status === 202 ? answer : undefined;
    });
    expect(accepted.body['warnings']).toContainEqual(
      expect.objectContaining({ pointer: '/data/student', rule: 'required', requirement: 'EDU-21' }),
    );
  });

  it('issue 14 item 3: with off, the data is not checked at all', async () => {
    expect((await bind('off')).status).toBe(200);
    const accepted = await eventually('the off binding to reach the ingest', async () => {
      const answer = await publishEvent({ school: '01AB' });
      return answer.status === 202 && answer.body['warnings'] === undefined ? answer : undefined;
    });
    expect(accepted.body['acceptedCount']).toBe(1);
  });

  it('issue 14 item 3: only an AsyncAPI message with a payload can be bound, and a binding can be read and removed', async () => {
    // An operator: Koerier maintains its own contract, and who may bind is judged before what.
    const webhook = await call('PUT', '/contract-bindings/nl.edu.other.v1', {
      token: admin,
      body: { contract: 'koerier-webhook', version: API_VERSION, mode: 'enforce' },
    });
    expect(webhook.status).toBe(409);
    expect((await call('GET', `/contract-bindings/${ENROLMENT_TYPE}`, { token: reader })).body).toMatchObject({
      mode: 'off',
    });
    expect((await call('DELETE', `/contract-bindings/${ENROLMENT_TYPE}`, { token: admin })).status).toBe(204);
    expect((await call('GET', `/contract-bindings/${ENROLMENT_TYPE}`, { token: reader })).status).toBe(404);
  });
});
