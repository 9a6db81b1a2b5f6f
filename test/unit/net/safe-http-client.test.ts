import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type LookupFunction, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSafeHttpClient,
  OutboundRequestError,
  type SafeHttpClient,
} from '../../../functions/net/safe-http-client.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type LocalCertificateAuthority,
} from '../../support/https-receiver.js';

/** A resolver that answers `answers` for every name (the guard judges whatever it returns). */
function resolvingTo(...answers: string[][]): LookupFunction & { calls: number } {
  const fn = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const addresses = answers[Math.min(fn.calls, answers.length - 1)] ?? [];
    fn.calls++;
    const list = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, list);
    else callback(null, list[0]?.address, list[0]?.family);
  }) as unknown as LookupFunction & { calls: number };
  fn.calls = 0;
  return fn;
}

async function failure(promise: Promise<unknown>): Promise<OutboundRequestError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundRequestError);
    return error as OutboundRequestError;
  }
  throw new Error('expected the request to fail');
}

let authority: LocalCertificateAuthority;
let receiver: HttpsReceiver;
const clients: SafeHttpClient[] = [];
// The receiver's random port is allowed, so the address guard, not the port rule, is what these cases meet.
const client = (options: Parameters<typeof createSafeHttpClient>[0] = {}) => {
  const created = createSafeHttpClient({
    extraCaCertificates: [authority.certificatePem],
    allowedPorts: [443, receiver.port],
    ...options,
  });
  clients.push(created);
  return created;
};

beforeAll(async () => {
  authority = createLocalCertificateAuthority();
  receiver = await startHttpsReceiver({ authority });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await receiver.close();
});

describe('safe outbound HTTP: what gets through', () => {
  it('WH-1: POSTs over HTTPS to a target trusted through the extra CA, and returns status, headers and body', async () => {
    receiver.setScript(scripts.always({ respond: 201, headers: { 'x-seen': 'yes' }, body: 'created' }));
    const response = await client({ allowLoopback: true }).request({
      method: 'POST',
      url: receiver.url,
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(response.status).toBe(201);
    expect(response.headers['x-seen']).toBe('yes');
    expect(response.body.toString()).toBe('created');
    expect(receiver.requests.at(-1)).toMatchObject({ method: 'POST', path: '/hook', body: 'hello' });
  });

  it('WH-1: a certificate from an untrusted CA fails as tls', async () => {
    const error = await failure(
      createSafeHttpClient({ allowLoopback: true }).request({ method: 'POST', url: receiver.url, body: 'x' }),
    );
    expect(error.kind).toBe('tls');
  });

  it('WH-1: plain http is refused outside the laptop host, before any connection', async () => {
    const error = await failure(client().request({ method: 'POST', url: `http://127.0.0.1:${receiver.port}/hook` }));
    expect(error.kind).toBe('invalid-url');
    expect(error.message).toMatch(/https/);
  });

  it('WH-3: credentials in the URL are refused', async () => {
    const error = await failure(
      client({ allowLoopback: true }).request({
        method: 'POST',
        url: `https://user:pw@127.0.0.1:${receiver.port}/hook`,
      }),
    );
    expect(error.kind).toBe('invalid-url');
  });

  it('SSRF: the laptop host may use plain http to loopback, but never to a name resolving elsewhere', async () => {
    const plain: Server = createHttpServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as AddressInfo;
    try {
      const ok = await client({ allowLoopback: true }).request({ method: 'POST', url: `http://127.0.0.1:${port}/` });
      expect(ok.status).toBe(204);
      const elsewhere = await failure(
        client({ allowLoopback: true, lookup: resolvingTo(['93.184.216.34']) }).request({
          method: 'POST',
          url: `http://public.example:${port}/`,
        }),
      );
      expect(elsewhere.kind).toBe('invalid-url');
    } finally {
      await new Promise((resolve) => plain.close(resolve));
    }
  });
});

describe('safe outbound HTTP: SSRF guard', () => {
  it.each(['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '0x7f.1', '2130706433', '0.0.0.0'])(
    'SSRF: the loopback target %s is refused outside the laptop host, without a connection',
    async (host) => {
      const before = receiver.connectionCount;
      const error = await failure(client().request({ method: 'POST', url: `https://${host}:${receiver.port}/hook` }));
      expect(error.kind).toBe('refused-address');
      expect(receiver.connectionCount).toBe(before);
    },
  );

  it.each([
    '10.0.0.1',
    '172.16.5.4',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.1.1',
    '[fd00::1]',
    '[fe80::1]',
    '[::ffff:169.254.169.254]',
    '224.0.0.1',
  ])('SSRF: the address literal %s is refused', async (host) => {
    const error = await failure(client().request({ method: 'POST', url: `https://${host}/hook` }));
    expect(error.kind).toBe('refused-address');
  });

  it('SSRF: localhost (resolved by the system resolver) is refused', async () => {
    const before = receiver.connectionCount;
    const error = await failure(client().request({ method: 'POST', url: `https://localhost:${receiver.port}/hook` }));
    expect(error.kind).toBe('refused-address');
    expect(receiver.connectionCount).toBe(before);
  });

  it.each([['10.1.2.3'], ['169.254.169.254'], ['fd00::5'], ['::ffff:192.168.1.1'], ['100.100.100.200']])(
    'SSRF: a hostname that resolves to the private address %s is refused',
    async (address) => {
      const error = await failure(
        client({ lookup: resolvingTo([address]) }).request({ method: 'POST', url: 'https://hooks.example.org/x' }),
      );
      expect(error.kind).toBe('refused-address');
      expect(error.message).toContain('hooks.example.org');
    },
  );

  it('SSRF: a hostname that mixes public and private answers is refused as a whole', async () => {
    const error = await failure(
      client({ lookup: resolvingTo(['93.184.216.34', '10.0.0.7']) }).request({
        method: 'POST',
        url: 'https://mixed.example.org/x',
      }),
    );
    expect(error.kind).toBe('refused-address');
  });

  it('SSRF: DNS rebinding: every connection is judged on its own resolution, not on an earlier one', async () => {
    // First answer: a public address (nothing listens there from this sandbox, so that attempt
    // fails on the network); second answer: loopback, where the receiver does listen.
    const lookup = resolvingTo(['93.184.216.34'], ['127.0.0.1']);
    const rebinding = client({ lookup, connectTimeoutMs: 300 });
    const first = await failure(
      rebinding.request({ method: 'POST', url: `https://rebind.example.org:${receiver.port}/hook` }),
    );
    expect(first.kind).not.toBe('refused-address');
    const before = receiver.connectionCount;
    const second = await failure(
      rebinding.request({ method: 'POST', url: `https://rebind.example.org:${receiver.port}/hook` }),
    );
    expect(second.kind).toBe('refused-address');
    expect(lookup.calls).toBe(2);
    expect(receiver.connectionCount).toBe(before);
  });

  it('SSRF: a redirect is not followed, also not to a private address', async () => {
    const target = await startHttpsReceiver({ authority });
    try {
      for (const location of [target.url, 'http://169.254.169.254/latest/meta-data/', 'https://10.0.0.1/']) {
        receiver.setScript(scripts.always({ respond: 307, headers: { location } }));
        const response = await client({ allowLoopback: true }).request({
          method: 'POST',
          url: receiver.url,
          body: 'x',
        });
        expect(response.status).toBe(307);
        expect(response.headers['location']).toBe(location);
      }
      expect(target.connectionCount).toBe(0);
    } finally {
      receiver.setScript(scripts.always({ respond: 204 }));
      await target.close();
    }
  });
});

describe('safe outbound HTTP: ports (review #19)', () => {
  it('review #19: by default only port 443 is called: another port is refused as invalid-url before any connection', async () => {
    const plain = createSafeHttpClient({
      extraCaCertificates: [authority.certificatePem],
      lookup: resolvingTo(['93.184.216.34']),
    });
    clients.push(plain);
    for (const url of [
      'https://hooks.example.org:22/x',
      'https://hooks.example.org:8443/x',
      'https://93.184.216.34:25/x',
    ]) {
      const error = await failure(plain.request({ method: 'POST', url }));
      expect(error.kind).toBe('invalid-url');
      expect(error.message).toMatch(/port/);
    }
  });

  it('review #19: the laptop host may call any port on loopback, and only there', async () => {
    const before = receiver.connectionCount;
    const laptop = createSafeHttpClient({ extraCaCertificates: [authority.certificatePem], allowLoopback: true });
    clients.push(laptop);
    receiver.setScript(scripts.always({ respond: 204 }));
    expect((await laptop.request({ method: 'POST', url: receiver.url, body: 'x' })).status).toBe(204);
    expect(receiver.connectionCount).toBeGreaterThan(before);
    const elsewhere = await failure(
      createSafeHttpClient({ allowLoopback: true, lookup: resolvingTo(['93.184.216.34']) }).request({
        method: 'POST',
        url: `https://public.example:${receiver.port}/`,
      }),
    );
    expect(elsewhere.kind).toBe('invalid-url');
  });
});

describe('safe outbound HTTP: bounds and error kinds', () => {
  it('review #8: a header value the HTTP client refuses fails as not-sendable, before any byte leaves', async () => {
    const before = receiver.connectionCount;
    const error = await failure(
      client({ allowLoopback: true }).request({
        method: 'POST',
        url: receiver.url,
        headers: { 'content-type': 'text/plain; name="\u20ac"' },
        body: 'x',
      }),
    );
    expect(error.kind).toBe('not-sendable');
    expect(receiver.connectionCount).toBe(before);
  });

  it('a target that never answers fails as timeout within the response bound', async () => {
    receiver.setScript(scripts.always({ hang: true }));
    const error = await failure(
      client({ allowLoopback: true, responseTimeoutMs: 300 }).request({ method: 'POST', url: receiver.url, body: 'x' }),
    );
    expect(error.kind).toBe('timeout');
  });

  it('a per-call deadline tighter than the client bound applies', async () => {
    receiver.setScript(scripts.always({ respond: 204, delayMs: 2_000 }));
    const error = await failure(
      client({ allowLoopback: true }).request({ method: 'POST', url: receiver.url, body: 'x', timeoutMs: 200 }),
    );
    expect(error.kind).toBe('timeout');
  });

  it('issue 15: the response bound covers the body: a target that sends its head and then stalls fails as timeout, and the next request goes through', async () => {
    const sockets = new Set<Socket>();
    const stalling: Server = createHttpServer((_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('partial');
    });
    stalling.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(stalling.address() as AddressInfo).port}/hook`;
      const started = Date.now();
      const error = await failure(
        client({ allowLoopback: true, responseTimeoutMs: 300 }).request({ method: 'POST', url, body: 'x' }),
      );
      expect(error.kind).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => stalling.close(resolve));
    }
    receiver.setScript(scripts.always({ respond: 204 }));
    const bounded = client({ allowLoopback: true, responseTimeoutMs: 300 });
    await failure(bounded.request({ method: 'POST', url: receiver.url, body: 'x', timeoutMs: 1 }));
    expect((await bounded.request({ method: 'POST', url: receiver.url, body: 'x' })).status).toBe(204);
  });

  it('WH-2: a target that answers 101 Switching Protocols with Upgrade is answered 101 at once, not held until the function times out', async () => {
    // Node hands such an answer to 'upgrade' listeners only; without one it closed the socket and
    // neither answered nor failed, and the deadline's destroy of a closed request ended nothing.
    const sockets = new Set<Socket>();
    const switching = createTcpServer((socket) => {
      sockets.add(socket);
      socket.once('data', () =>
        socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n'),
      );
    });
    await new Promise<void>((resolve) => switching.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(switching.address() as AddressInfo).port}/hook`;
      const started = Date.now();
      const response = await client({ allowLoopback: true, responseTimeoutMs: 5_000 }).request({
        method: 'POST',
        url,
        body: 'x',
      });
      expect(response).toMatchObject({ status: 101, body: Buffer.alloc(0) });
      expect(response.headers['upgrade']).toBe('websocket');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => switching.close(resolve));
    }
  });

  it('a slow target within the bound is answered normally', async () => {
    receiver.setScript(scripts.always({ respond: 202, delayMs: 150 }));
    const response = await client({ allowLoopback: true, responseTimeoutMs: 2_000 }).request({
      method: 'POST',
      url: receiver.url,
      body: 'x',
    });
    expect(response.status).toBe(202);
  });

  it('a connection reset fails as reset', async () => {
    receiver.setScript(scripts.always({ reset: true }));
    const error = await failure(
      client({ allowLoopback: true }).request({ method: 'POST', url: receiver.url, body: 'x' }),
    );
    expect(error.kind).toBe('reset');
  });

  it('a port where nothing listens fails as connection-refused', async () => {
    const closed = await startHttpsReceiver({ authority });
    await closed.close();
    const error = await failure(
      client({ allowLoopback: true }).request({ method: 'POST', url: closed.url, body: 'x' }),
    );
    expect(error.kind).toBe('connection-refused');
  });

  it('a name that does not resolve fails as dns', async () => {
    const error = await failure(
      client().request({ method: 'POST', url: 'https://no-such-host.invalid/hook', body: 'x' }),
    );
    expect(error.kind).toBe('dns');
  });

  it('WH-2: a response body over the bound fails as too-large, and still tells the status and the headers', async () => {
    receiver.setScript(scripts.always({ respond: 429, headers: { 'retry-after': '120' }, body: 'x'.repeat(10_000) }));
    const error = await failure(
      client({ allowLoopback: true, maxResponseBytes: 1024 }).request({ method: 'POST', url: receiver.url, body: 'x' }),
    );
    expect(error.kind).toBe('too-large');
    expect(error.status).toBe(429);
    expect(error.headers?.['retry-after']).toBe('120');
  });
});
