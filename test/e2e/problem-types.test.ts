/**
 * Issue 14, item 6: every problem `type` Koerier answers with is a URI that dereferences to its page.
 * Taken from real refusals of the laptop host, resolved as RFC 9457 §3.1.1 says a client resolves
 * it (against the URL of the answer, RFC 3986 §5), and fetched: the page of that type comes back.
 */
import { randomUUID } from 'node:crypto';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemTypes, type ProblemSlug } from '../../functions/core/http/problem-types.js';
import { settingEnv } from '../../functions/config/setting-names.js';
import { EdgeWebAcl } from '../../lib/constructs/edge-protection.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { problemTypeUri } from '../support/problem-types.js';

const MANAGE_RATE = 2;
const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';

let koerier: TestHost;
let publisher: string;
let subscriber: string;
let wafRateLimitedBody: string;

beforeAll(async () => {
  // Synthesised before the host starts: the synth blocks the event loop for seconds, long enough for
  // the host to close an idle keep-alive connection that fetch would then reuse.
  wafRateLimitedBody = webAclRateLimitedBody();
  koerier = await startTestHost({ [settingEnv.manageRatePerMinute]: String(MANAGE_RATE) }, { queueTriggers: false });
  publisher = await koerier.token('dev-publisher', ['events:publish']);
  subscriber = await koerier.token('dev-subscriber');
});
afterAll(() => koerier?.stop());

/** The body the edge's web ACL answers its 429 with, as synthesised into the template. */
function webAclRateLimitedBody(): string {
  const stack = new Stack(new App(), 'EdgeOnly', { env: { account: '123456789012', region: 'us-east-1' } });
  new EdgeWebAcl(stack, 'Acl', { rateLimitPerIp: 1000, rateLimitPerAuthorization: 1000 });
  const [acl] = Object.values(Template.fromStack(stack).findResources('AWS::WAFv2::WebACL')) as {
    Properties: { CustomResponseBodies: Record<string, { Content: string }> };
  }[];
  return acl!.Properties.CustomResponseBodies['rate-limited']!.Content;
}

interface Refusal {
  readonly url: string;
  readonly status: number;
  readonly type: string;
}

async function refusal(url: string, init: RequestInit = {}): Promise<Refusal> {
  const response = await fetch(url, init);
  expect(response.headers.get('content-type'), url).toBe('application/problem+json');
  const body = (await response.json()) as { type: string; status: number };
  expect(body.status, url).toBe(response.status);
  return { url: response.url, status: response.status, type: body.type };
}

const publish = (body: string, key = randomUUID(), bearer = publisher) =>
  refusal(`${koerier.url}/events`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/cloudevents+json',
      'idempotency-key': key,
    },
    body,
  });

/** What a client does with a `type`: resolve it against the answer's URL, and fetch what that names. */
async function dereference(type: string, answeredUrl: string) {
  const resolved = new URL(type, answeredUrl);
  const page = await fetch(resolved);
  return {
    resolved: resolved.href,
    status: page.status,
    contentType: page.headers.get('content-type'),
    text: await page.text(),
  };
}

async function expectPageOf(slug: ProblemSlug, type: string, answeredUrl: string) {
  const page = await dereference(type, answeredUrl);
  expect(page.resolved, slug).toBe(`${koerier.url}/problems/${slug}`);
  expect(page.status, page.resolved).toBe(200);
  expect(page.contentType).toBe('text/markdown; charset=utf-8');
  expect(page.text, slug).toContain(`# ${problemTypes[slug].title}`);
  expect(page.text, slug).toContain(`\`${type}\``);
  for (const status of problemTypes[slug].status) expect(page.text, slug).toContain(String(status));
}

describe('issue 14 #6: problem types resolve to their pages (RFC 9457 §3.1.1)', () => {
  it('issue 14 #6: the type of a real 400, 401, 403, 404, 405, 422 and 429 of the laptop host, resolved against the answer, is that type’s page', async () => {
    const event = JSON.stringify({
      specversion: '1.0',
      id: randomUUID(),
      source: SOURCE,
      type: 'nl.edu.leerling.ingeschreven',
    });
    const key = randomUUID();
    const accepted = await fetch(`${koerier.url}/events`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${publisher}`,
        'content-type': 'application/cloudevents+json',
        'idempotency-key': key,
      },
      body: event,
    });
    expect(accepted.status).toBe(202);

    const refusals: [ProblemSlug, Refusal][] = [
      ['invalid-cloudevent', await publish(JSON.stringify({ specversion: '1.0', source: SOURCE }))],
      ['unauthorized', await refusal(`${koerier.url}/subscriptions`)],
      [
        'forbidden',
        await refusal(`${koerier.url}/subscriptions`, { headers: { authorization: `Bearer ${publisher}` } }),
      ],
      ['not-found', await refusal(`${koerier.url}/no/such/resource/deep/below/the/api`)],
      ['not-found', await refusal(`${koerier.origin}/not-under-the-api`)],
      ['method-not-allowed', await refusal(`${koerier.url}/events`, { method: 'DELETE' })],
      ['idempotency-key-reused', await publish(JSON.stringify({ ...JSON.parse(event), id: randomUUID() }), key)],
    ];
    // The subscriber's management bucket holds MANAGE_RATE requests a minute.
    const list = { headers: { authorization: `Bearer ${subscriber}` } };
    for (let i = 0; i < MANAGE_RATE; i++) expect((await fetch(`${koerier.url}/subscriptions`, list)).status).toBe(200);
    refusals.push(['rate-limited', await refusal(`${koerier.url}/subscriptions`, list)]);

    expect(refusals.map(([, r]) => r.status)).toEqual([400, 401, 403, 404, 404, 405, 422, 429]);
    for (const [slug, answer] of refusals) {
      // One string per kind of problem, whatever route or depth answered: what clients match on.
      expect(answer.type, `${answer.status} from ${answer.url}`).toBe(problemTypeUri(slug));
      await expectPageOf(slug, answer.type, answer.url);
    }
  });

  it('issue 14 #6: the 429 body of the edge’s web ACL (WAF, another stack) has the same rate-limited type, and it resolves to its page', async () => {
    const body = JSON.parse(wafRateLimitedBody) as { type: string; status: number };
    expect(body).toMatchObject({ type: problemTypeUri('rate-limited'), status: 429 });
    // CloudFront answers it for any path of the distribution, which also serves the API.
    await expectPageOf('rate-limited', body.type, `${koerier.url}/events`);
  });

  it('issue 14 #6: a type Koerier has no page for is a 404 problem, not a page', async () => {
    const unknown = await refusal(`${koerier.url}/problems/no-such-type`);
    expect(unknown).toMatchObject({ status: 404, type: problemTypeUri('not-found') });
  });
});
