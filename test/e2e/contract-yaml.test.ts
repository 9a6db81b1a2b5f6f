/**
 * YAML contract documents on the laptop host (issue 14 item 2; EDU-6, EDU-21): an AsyncAPI and an
 * OpenAPI document published as YAML are checked by the same parsers, kept byte for byte (comments
 * and all) with the media type they were published in, and served back in it; YAML that is not
 * YAML names its line; an alias bomb is refused before any parser expands it.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';
import { ENROLMENT_TYPE, enrolmentContract, enrolmentPayload, owner } from '../support/contract-documents.js';
import { problemTypeUri } from '../support/problem-types.js';

let koerier: TestHost;
let writer: string;

beforeAll(async () => {
  koerier = await startTestHost({}, { queueTriggers: false });
  writer = await koerier.host.issueToken('registry-writer', ['contracts:read', 'contracts:write']);
}, 60_000);
afterAll(() => koerier?.stop());

/** A call as the registry writer, answered whatever its status (the generated client, no retries). */
const call = (method: string, path: string, body?: unknown) => callApi(koerier.url, writer, method, path, body);

const publish = (name: string, version: string, document: string, mediaType?: string, kind = 'asyncapi-data') =>
  call('PUT', `/contracts/${name}/versions/${version}`, {
    kind,
    owner,
    contact: owner,
    document,
    ...(mediaType === undefined ? {} : { mediaType }),
  });

const checksumOf = (text: string) => `sha-256=:${createHash('sha256').update(text, 'utf8').digest('base64')}:`;

/** The enrolment contract as its owner might write it in YAML: a comment, an anchor and an alias. */
function enrolmentYaml(extra: Record<string, unknown> = {}, version = '1.0.0'): string {
  const text = stringify(enrolmentContract(enrolmentPayload(extra), version));
  return `# Enrolments: the data contract of the enrolment events.\n${text}x-owner: &owner Stichting Onderwijsdata\nx-maintainer: *owner\n`;
}

const openApiYaml = [
  '# The webhook a partner receives enrolments on.',
  'openapi: 3.1.0',
  'info:',
  '  title: Enrolment webhook',
  '  version: 1.0.0',
  'paths:',
  '  /hook:',
  '    post:',
  '      responses:',
  "        '204':",
  '          description: Received.',
  '',
].join('\n');

describe('YAML contract documents (issue 14 item 2)', () => {
  it('EDU-6, EDU-21: an AsyncAPI 3 document published as application/yaml is checked, and served back byte for byte as application/yaml with the checksum of its text', async () => {
    const yaml = enrolmentYaml();
    const published = await publish('yaml-enrolments', '1.0.0', yaml, 'application/yaml');
    expect(published.status, published.text).toBe(201);
    expect(published.body).toMatchObject({
      mediaType: 'application/yaml',
      checksum: checksumOf(yaml),
      size: Buffer.byteLength(yaml),
      specVersion: '3.0.0',
      eventTypes: [ENROLMENT_TYPE],
      messages: [{ id: 'enrolled', name: ENROLMENT_TYPE, hasPayload: true }],
    });
    const document = await call('GET', '/contracts/yaml-enrolments/versions/1.0.0/document');
    expect(document.status).toBe(200);
    expect(document.headers.get('content-type')).toBe('application/yaml');
    expect(document.text).toBe(yaml);
    expect(document.headers.get('repr-digest')).toBe(checksumOf(yaml));

    // The next version, in another of YAML's names, is compared with this one through the payload schemas read from the YAML.
    const next = enrolmentYaml({ nickname: { type: 'string' } }, '1.1.0');
    const compatible = await publish('yaml-enrolments', '1.1.0', next, 'application/x-yaml');
    expect(compatible.status, compatible.text).toBe(201);
    expect(compatible.body).toMatchObject({
      mediaType: 'application/x-yaml',
      compatibility: { previous: '1.0.0', verdict: 'forward' },
    });
    expect((await call('GET', '/contracts/yaml-enrolments/versions/1.1.0/document')).headers.get('content-type')).toBe(
      'application/x-yaml',
    );
  });

  it('EDU-6, EDU-21: an OpenAPI 3 document published as text/yaml is checked by the OpenAPI parser and served back as published', async () => {
    const published = await publish('yaml-webhook', '1.0.0', openApiYaml, 'text/yaml', 'openapi-webhook');
    expect(published.status, published.text).toBe(201);
    expect(published.body).toMatchObject({
      mediaType: 'text/yaml',
      checksum: checksumOf(openApiYaml),
      specVersion: '3.1.0',
    });
    const document = await call('GET', '/contracts/yaml-webhook/versions/1.0.0/document');
    expect(document.headers.get('content-type')).toBe('text/yaml');
    expect(document.text).toBe(openApiYaml);
    // Without a media type, YAML text is still YAML: the kind's own YAML media type.
    const undeclared = await publish(
      'yaml-webhook',
      '1.0.1',
      openApiYaml.replace('version: 1.0.0', 'version: 1.0.1'),
      undefined,
      'openapi-webhook',
    );
    expect(undeclared.body).toMatchObject({ mediaType: 'application/vnd.oai.openapi+yaml' });
  });

  it("EDU-21: an OpenAPI YAML document the parser refuses is 400 with the parser's findings, each naming its line", async () => {
    const noVersion = openApiYaml.replace('  version: 1.0.0\n', '');
    const refused = await publish('yaml-webhook-broken', '1.0.0', noVersion, 'application/yaml', 'openapi-webhook');
    expect(refused.status).toBe(400);
    expect(refused.body['type']).toBe(problemTypeUri('contract-document-invalid'));
    expect(refused.body['errors']).toContainEqual(
      expect.objectContaining({ rule: 'openapi', message: expect.stringContaining("'version'") }),
    );
    const asyncApi = [
      'asyncapi: 3.0.0',
      'info:',
      '  title: Broken',
      '  version: 1.0.0',
      'channels:',
      '  c:',
      '    address: 1',
      '',
    ].join('\n');
    const located = await publish('yaml-broken', '1.0.0', asyncApi, 'application/yaml');
    expect(located.status).toBe(400);
    expect(located.body['errors']).toContainEqual(
      expect.objectContaining({
        rule: 'asyncapi',
        attribute: '/channels/c/address',
        message: expect.stringMatching(/\(line 7\)$/),
      }),
    );
  });

  it('EDU-21: text that is not YAML is 400 naming the line and column; nothing is stored', async () => {
    const duplicate = [
      'asyncapi: 3.0.0',
      'info:',
      '  title: Enrolments',
      '  title: Again',
      '  version: 1.0.0',
      '',
    ].join('\n');
    const refused = await publish('not-yaml', '1.0.0', duplicate, 'application/yaml');
    expect(refused.status).toBe(400);
    expect(refused.body['type']).toBe(problemTypeUri('contract-document-invalid'));
    expect(refused.body['errors']).toEqual([
      expect.objectContaining({
        rule: 'asyncapi',
        requirement: 'EDU-21',
        message: expect.stringMatching(/^YAML line 4, column 3: .*DUPLICATE_KEY/),
      }),
    ]);
    const unclosed = await publish('not-yaml', '1.0.0', 'asyncapi: 3.0.0\ninfo: {title: x\n', 'text/yaml');
    expect(unclosed.status).toBe(400);
    expect(JSON.stringify(unclosed.body['errors'])).toMatch(/YAML line \d+, column \d+/);
    expect((await call('GET', '/contracts/not-yaml')).status).toBe(404);
  });

  it('EDU-21: a YAML alias bomb ("billion laughs") is refused with 400 before any parser expands it, and the register keeps answering', async () => {
    const levels = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    const bomb = [
      'asyncapi: 3.0.0',
      'info: {title: lol, version: 1.0.0}',
      `x-a: &a [${Array(9).fill('lol').join(', ')}]`,
      ...levels.slice(1).map((level, i) => `x-${level}: &${level} [${Array(9).fill(`*${levels[i]}`).join(', ')}]`),
      '',
    ].join('\n');
    const refused = await publish('lol', '1.0.0', bomb, 'application/yaml');
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body['errors'])).toContain('aliases expand too far');
    expect((await call('GET', '/contracts/lol')).status).toBe(404);
    // A few aliases, as people write them, are fine (the AsyncAPI document above has one).
    expect((await call('GET', '/contracts')).status).toBe(200);
  });

  it('EDU-21: the declared media type is held to: YAML text declared as JSON is 400, an unknown media type is 400, a YAML object is refused', async () => {
    const asJson = await publish('mistyped', '1.0.0', enrolmentYaml(), 'application/json');
    expect(asJson.status).toBe(400);
    expect(JSON.stringify(asJson.body['errors'])).toContain('not JSON');
    const unknown = await publish('mistyped', '1.0.0', enrolmentYaml(), 'application/xml');
    expect(unknown).toMatchObject({ status: 400, body: { type: problemTypeUri('invalid-contract') } });
    const objectAsYaml = await call('PUT', '/contracts/mistyped/versions/1.0.0', {
      kind: 'asyncapi-data',
      owner,
      contact: owner,
      document: enrolmentContract(enrolmentPayload()),
      mediaType: 'application/yaml',
    });
    expect(objectAsYaml).toMatchObject({ status: 400, body: { type: problemTypeUri('invalid-contract') } });
  });
});
