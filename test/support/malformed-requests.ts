/**
 * Seeded generation of malformed requests for Koerier's HTTP API, for the fuzz test
 * (test/e2e/fuzz-malformed-requests.test.ts). Each request starts as a valid one for a route —
 * POST /events in structured, binary and batch mode, the subscriptions and delivery routes, the
 * unauthenticated ones, unknown paths and methods — and one mutator breaks it in one way: wrong
 * attribute types, huge or deeply nested JSON, duplicate members, invalid UTF-8, control
 * characters, odd Content-Types, broken tokens or Idempotency-Keys, forged cursors, …
 *
 * The same seed gives the same requests in the same order (nothing here depends on answers), so
 * a failure is replayed with its seed and index. The first `mutators.length` requests use every
 * mutator once, so every kind of breakage is sent whatever the count; after that they are drawn
 * by weight (the expensive, megabyte-sized ones rarely).
 */
import { createHash } from 'node:crypto';

/** mulberry32: a tiny, fast, seedable PRNG (uniform in [0, 1)). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type HeaderValue = string | Buffer;
export type HeaderList = [name: string, value: HeaderValue][];

export interface FuzzRequest {
  /** Which mutator made it, `<family>/<what>`, e.g. `structured/duplicate-member`. */
  readonly mutation: string;
  readonly method: string;
  /** Request target as sent: raw path and query. */
  readonly target: string;
  /** Header lines in order, values as sent (a Buffer for raw bytes). Host, Content-Length and Connection are added when sent. */
  readonly headers: HeaderList;
  readonly body: Buffer;
  /**
   * Set when the request breaks a rule Koerier must enforce, saying which: a 2xx answer is then
   * a failure too (a wrong answer rather than a crash).
   */
  readonly mustRefuse?: string;
}

/** What the generator needs from the running host. */
export interface FuzzContext {
  readonly tokens: {
    /** `events:publish`, a client granted every source. */
    readonly publisher: string;
    /** `subscriptions:manage`, the owner of `subscriptionIds`. */
    readonly manager: string;
    /** `subscriptions:manage` and `admin`. */
    readonly admin: string;
    /** A known client without the scope the routes ask for. */
    readonly wrongScope: string;
    /** Every scope, but a client without grants or entitlements. */
    readonly stranger: string;
  };
  /** Subscriptions of the manager that exist. */
  readonly subscriptionIds: readonly string[];
  /** Cursors the subscription list handed out (valid for the manager). */
  readonly listCursors: readonly string[];
  /** The manager's client id (cursors carry it). */
  readonly managerClientId: string;
  /** A loopback sink the manager may name (validation agreed: nobody is called). */
  readonly sink: string;
  /** The credential the pool subscriptions were created with (undefined: none). */
  readonly sinkCredential: unknown;
}

interface Mutator {
  readonly name: string;
  /** Relative frequency; 0.05 for the ones that send megabytes. */
  readonly weight: number;
  make(g: Generator): FuzzRequest;
}

const EVENT_TYPE = 'nl.example.fuzz.v1';
const SOURCES = [
  'urn:nld:oin:00000001823288444000:systeem:fuzz',
  'https://fuzz.example/source',
  '/fuzz/source',
  'urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66',
];
/** Reverse-DNS types of which a label breaks RFC 1035's rules (issue 28 item 3). */
const BROKEN_LABEL_TYPES = [
  'nl.example.fuzz-',
  'nl.-example.fuzz',
  'nl..example',
  '.nl.example',
  'nl.example.',
  `nl.${'a'.repeat(64)}.fuzz`,
  'nl.exa mple.fuzz',
];
/** Extension names CloudEvents 1.0 §3.1.1 does not allow (lower-case letters and digits only). */
const INVALID_EXTENSION_NAMES = ['Upper', 'with-dash', 'with_underscore', '💥', '$ref', 'data_base64x', 'ex.t'];
const ATTRIBUTES = [
  'specversion',
  'id',
  'source',
  'type',
  'time',
  'datacontenttype',
  'dataschema',
  'subject',
  'fuzzext',
];
const SUBSCRIPTION_MEMBERS = [
  'sink',
  'source',
  'types',
  'filters',
  'protocol',
  'delivery',
  'contentmode',
  'batchsupported',
  'sinkcredential',
  'validation',
  'retrywindowseconds',
];
const MIB = 1024 * 1024;

export class MalformedRequests {
  private readonly random: () => number;
  private readonly generator: Generator;
  private produced = 0;
  private readonly totalWeight: number;

  constructor(seed: number, context: FuzzContext) {
    this.random = mulberry32(seed);
    this.generator = new Generator(this.random, context);
    this.totalWeight = MUTATORS.reduce((sum, mutator) => sum + mutator.weight, 0);
  }

  /** Mutator names, in the order of the first pass. */
  static mutationNames(): string[] {
    return MUTATORS.map((mutator) => mutator.name);
  }

  next(): FuzzRequest {
    const index = this.produced++;
    let mutator: Mutator;
    if (index < MUTATORS.length) mutator = MUTATORS[index]!;
    else {
      let draw = this.random() * this.totalWeight;
      mutator = MUTATORS.find((candidate) => (draw -= candidate.weight) < 0) ?? MUTATORS.at(-1)!;
    }
    const request = mutator.make(this.generator);
    return { ...request, mutation: mutator.name };
  }
}

/** Building blocks: random choices, valid requests, odd values. */
class Generator {
  private counter = 0;
  /** Idempotency-Keys already sent, for reuse with another body. */
  private readonly sentKeys: string[] = [];

  constructor(
    readonly random: () => number,
    readonly context: FuzzContext,
  ) {}

  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  uuid(): string {
    const bytes = Buffer.alloc(16);
    for (let i = 0; i < 16; i++) bytes[i] = this.int(0, 255);
    bytes[6] = (bytes[6]! & 0x0f) | 0x40;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  key(): string {
    const key = this.uuid();
    this.sentKeys.push(key);
    if (this.sentKeys.length > 200) this.sentKeys.shift();
    return key;
  }

  usedKey(): string {
    return this.sentKeys.length > 0 ? this.pick(this.sentKeys) : this.key();
  }

  letters(length: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'): string {
    let text = '';
    for (let i = 0; i < length; i++) text += alphabet[Math.floor(this.random() * alphabet.length)];
    return text;
  }

  bytes(length: number): Buffer {
    const buffer = Buffer.alloc(length);
    for (let i = 0; i < length; i++) buffer[i] = this.int(0, 255);
    return buffer;
  }

  /** A value of any JSON type, mostly of the wrong one for wherever it goes. */
  oddValue(): unknown {
    const choices: (() => unknown)[] = [
      () => this.int(-1000, 1000),
      () => this.random() * 1e6,
      () => this.pick([0, -0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2]),
      () => this.chance(0.5),
      () => null,
      () => [],
      () => [this.letters(3), this.int(0, 9)],
      () => ({}),
      () => ({ [this.letters(4)]: this.letters(4) }),
      () => '',
      () => ' ',
      () => this.letters(this.int(1, 20)),
      () => 'a'.repeat(this.int(1000, 70_000)),
      () => '\u0000',
      () => `tab\there\u0007bell\u001b[31m`,
      () => '\ud800',
      () => '\udfff\ud800',
      () => '😀👩‍👩‍👧‍👦',
      () => 'ünïcödé ﷽',
      () => '%00%zz%',
      () => '../../etc/passwd',
      () => '2020-13-45T25:61:61Z',
      () => 'http://[::1',
      () => 'urn:nld:oin:',
      () => '\r\nX-Injected: yes',
      () => '"quoted"',
      () => '\\',
      () => '<script>alert(1)</script>',
    ];
    return this.pick(choices)();
  }

  event(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const n = ++this.counter;
    const event: Record<string, unknown> = {
      specversion: '1.0',
      id: `fuzz-${n}-${this.letters(6)}`,
      source: this.pick(SOURCES),
      type: EVENT_TYPE,
    };
    if (this.chance(0.5)) event['time'] = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
    if (this.chance(0.3)) event['subject'] = `leerling-${n}`;
    const data = this.int(0, 3);
    if (data === 1) {
      event['datacontenttype'] = 'application/json';
      event['data'] = { n, text: this.letters(8) };
    } else if (data === 2) {
      event['datacontenttype'] = 'text/plain';
      event['data'] = `tekst ${n}`;
    } else if (data === 3) {
      event['datacontenttype'] = 'application/octet-stream';
      event['data_base64'] = this.bytes(this.int(1, 40)).toString('base64');
    }
    return { ...event, ...overrides };
  }

  auth(kind: keyof FuzzContext['tokens']): HeaderList {
    return [['Authorization', `Bearer ${this.context.tokens[kind]}`]];
  }

  /** A POST /events request in structured mode around `text`. */
  structured(
    text: string | Buffer,
    extra: HeaderList = [],
    contentType: HeaderValue = 'application/cloudevents+json',
  ): Omit<FuzzRequest, 'mutation'> {
    return {
      method: 'POST',
      target: '/events',
      headers: [...this.auth('publisher'), ['Idempotency-Key', this.key()], ['Content-Type', contentType], ...extra],
      body: Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'),
    };
  }

  batch(text: string | Buffer, extra: HeaderList = []): Omit<FuzzRequest, 'mutation'> {
    return this.structured(text, extra, 'application/cloudevents-batch+json');
  }

  /** A valid binary-mode POST /events: attributes in ce- headers, the data as the body. */
  binary(): { headers: HeaderList; body: Buffer; contentType: string } {
    const n = ++this.counter;
    const headers: HeaderList = [
      ['ce-specversion', '1.0'],
      ['ce-id', `fuzz-binary-${n}`],
      ['ce-source', this.pick(SOURCES)],
      ['ce-type', EVENT_TYPE],
    ];
    if (this.chance(0.5)) headers.push(['ce-time', new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString()]);
    if (this.chance(0.3)) headers.push(['ce-subject', `leerling%20${n}`]);
    const contentType = this.pick(['application/json', 'text/plain; charset=utf-8', 'application/octet-stream']);
    const body =
      contentType === 'application/json'
        ? Buffer.from(JSON.stringify({ n }))
        : contentType.startsWith('text/')
          ? Buffer.from(`tekst ${n}`)
          : this.bytes(16);
    return { headers, body, contentType };
  }

  binaryRequest(
    headers: HeaderList,
    body: Buffer,
    contentType: string | undefined,
    extra: HeaderList = [],
  ): Omit<FuzzRequest, 'mutation'> {
    return {
      method: 'POST',
      target: '/events',
      headers: [
        ...this.auth('publisher'),
        ['Idempotency-Key', this.key()],
        ...(contentType === undefined ? [] : ([['Content-Type', contentType]] as HeaderList)),
        ...headers,
        ...extra,
      ],
      body,
    };
  }

  subscriptionBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const body: Record<string, unknown> = {
      sink: this.context.sink,
      types: [EVENT_TYPE],
      validation: 'agreed',
      contentmode: this.pick(['structured', 'binary', 'batch']),
      ...(this.context.sinkCredential === undefined ? {} : { sinkcredential: this.context.sinkCredential }),
    };
    if (body['contentmode'] === 'batch') body['batchsupported'] = true;
    return { ...body, ...overrides };
  }

  subscriptionId(): string {
    if (this.context.subscriptionIds.length > 0 && this.chance(0.7)) return this.pick(this.context.subscriptionIds);
    return this.uuid();
  }

  /** A path parameter a client should never send: huge, encoded, empty-looking. */
  oddId(): string {
    return this.pick([
      () => 'a'.repeat(this.int(1025, 2100)),
      () => 'b'.repeat(this.int(2049, 9000)),
      () => '%2F..%2F..%2Fetc',
      () => '%00',
      () => '%ZZ',
      () => '%C3%28',
      () => '%F0%9F%98%80',
      () => encodeURIComponent('ünïcödé'),
      () => '..',
      () => '.',
      () => this.letters(1, "~!$&'()*+,;=:@"),
      () => `${this.uuid()}%20`,
      () => this.uuid().toUpperCase(),
      () => `${this.uuid()};x=1`,
      () => 'null',
      () => '__proto__',
      () => 'constructor',
      () => 'sub#x',
      () => 'validation',
    ])();
  }

  /** A query value for `limit`: odd numbers, not numbers, repeated. */
  oddLimit(): string {
    return this.pick(
      [
        '0',
        '-1',
        '1.5',
        '1e2',
        '1e400',
        'NaN',
        'Infinity',
        '-Infinity',
        '99999999999999999999999',
        '',
        'abc',
        '%00',
        '%ZZ',
        '1&limit=2',
        '+5',
        '%205',
        '0x10',
        '101',
        '1001',
        '1000000',
        '1,2',
        '１',
        '2%00',
        '100',
        '1',
      ].map((value) => value),
    );
  }

  /** A cursor no list handed out: garbage, huge, well-formed JSON of the wrong shape, forged keys. */
  oddCursor(subscriptionId: string): string {
    const b64 = (value: unknown) =>
      Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
    const owner = this.context.managerClientId;
    const cursor = this.pick([
      () => this.letters(this.int(1, 40)),
      () => 'x'.repeat(this.int(2000, 12_000)),
      () => b64('not json'),
      () => b64(null),
      () => b64([1, 2]),
      () => b64({}),
      () => b64({ owner: { S: owner }, id: { S: this.uuid() } }),
      () => b64({ owner: { S: owner }, id: { S: this.uuid() }, createdAt: { S: new Date().toISOString() } }),
      () => b64({ owner: { S: owner }, id: { S: this.uuid() }, createdAt: { N: '1' } }),
      () => b64({ owner: { S: owner }, id: { S: 'x'.repeat(this.int(2049, 3000)) }, createdAt: { S: '2026' } }),
      () => b64({ owner: { S: owner }, id: { S: '' }, createdAt: { S: '' } }),
      () => b64({ owner: { S: owner }, id: { S: this.uuid() }, extra: { S: 'x' } }),
      () => b64({ owner: { S: owner }, id: { S: this.uuid() }, createdAt: { BOOL: true } }),
      () => b64({ owner: { S: 'someone-else' }, id: { S: this.uuid() }, createdAt: { S: '2026' } }),
      () => b64({ pk: `sub#${subscriptionId}`, sk: 'attempt#' }),
      () => b64({ pk: `sub#${subscriptionId}`, sk: `attempt#${'z'.repeat(this.int(1025, 3000))}` }),
      () => b64({ pk: `sub#${subscriptionId}`, sk: `dead#${'z'.repeat(this.int(1025, 3000))}` }),
      () => b64({ pk: `sub#${subscriptionId}`, sk: 'dead#' }),
      () => b64({ pk: `sub#${subscriptionId}`, sk: 42 }),
      () => b64({ pk: `sub#${this.uuid()}`, sk: 'attempt#x' }),
      () => `${b64({ owner: { S: owner } })}====`,
      () => this.pick(this.context.listCursors.length > 0 ? this.context.listCursors : ['e30']),
      () => '%%%',
    ])();
    // Mostly as a client should send it; sometimes raw, so '%', '+', '=' and '&' arrive unescaped.
    return this.chance(0.8) ? encodeURIComponent(cursor) : cursor;
  }

  /** `[[[…]]]` or `{"a":{"a":…}}`, `depth` levels. */
  deep(depth: number, kind: 'array' | 'object' = this.chance(0.5) ? 'array' : 'object', leaf = '1'): string {
    return kind === 'array'
      ? '['.repeat(depth) + leaf + ']'.repeat(depth)
      : '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
  }

  /** A valid access token with one of many breakages. */
  brokenAuthorization(): { headers: HeaderList; why: string } {
    const token = this.context.tokens.publisher;
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flip = (text: string) => text.slice(0, -2) + (text.at(-2) === 'A' ? 'B' : 'A') + text.at(-1)!;
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
    const hs = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: 'x' })).toString('base64url');
    const options: [HeaderList, string][] = [
      [[], 'no Authorization'],
      [[['Authorization', 'Bearer']], 'scheme without token'],
      [[['Authorization', 'Bearer ']], 'empty token'],
      [[['Authorization', 'Basic ZGV2LXB1Ymxpc2hlcjpzZWNyZXQ=']], 'Basic scheme'],
      [[['Authorization', `Bearer ${header}.${payload}.${flip(signature)}`]], 'tampered signature'],
      [[['Authorization', `Bearer ${none}.${payload}.`]], 'alg none'],
      [[['Authorization', `Bearer ${hs}.${payload}.${signature}`]], 'alg HS256 header on an RS/ES signature'],
      [[['Authorization', `Bearer ${token.slice(0, this.int(1, token.length - 1))}`]], 'truncated token'],
      [[['Authorization', `Bearer ${header}.${payload}`]], 'two segments'],
      [
        [['Authorization', `Bearer ${header}.${Buffer.from('{"iss":').toString('base64url')}.${signature}`]],
        'payload not JSON',
      ],
      [[['Authorization', `Bearer ${'a'.repeat(this.int(5000, 12_000))}`]], 'huge token'],
      [[['Authorization', Buffer.concat([Buffer.from('Bearer '), this.bytes(20)])]], 'raw bytes'],
      [[['Authorization', `Bearer ${this.context.tokens.wrongScope}`]], 'token without the scope'],
      [[['Authorization', `Bearer ${header}.${payload}.${signature}.${signature}`]], 'four segments'],
      [
        [
          ['Authorization', `Bearer ${token}`],
          ['Authorization', `Bearer ${token}`],
        ],
        'two Authorization headers',
      ],
      [[['Authorization', `Bearer ${token}x`]], 'token with a trailing character'],
      [
        [
          [
            'Authorization',
            `Bearer ${Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'unknown-kid' })).toString('base64url')}.${payload}.${signature}`,
          ],
        ],
        'unknown kid',
      ],
    ];
    const [headers, why] = this.pick(options);
    return { headers, why };
  }

  /** Everything but the Idempotency-Key of a valid POST /events; the key broken. */
  brokenKey(): { headers: HeaderList; why: string; refuse: boolean } {
    const options: [HeaderList, string, boolean][] = [
      [[], 'no Idempotency-Key', true],
      [[['Idempotency-Key', '']], 'empty key', true],
      [[['Idempotency-Key', '   ']], 'blank key', true],
      [[['Idempotency-Key', 'not-a-uuid']], 'not a UUID', true],
      [[['Idempotency-Key', '6ba7b810-9dad-11d1-80b4-00c04fd430c8']], 'UUIDv1', true],
      [[['Idempotency-Key', '00000000-0000-0000-0000-000000000000']], 'nil UUID', true],
      [[['Idempotency-Key', this.uuid().toUpperCase()]], 'upper-case UUIDv4', false],
      [[['Idempotency-Key', `"${this.uuid()}"`]], 'quoted UUIDv4', false],
      [[['Idempotency-Key', `"${this.uuid()}`]], 'half-quoted', true],
      [
        [
          ['Idempotency-Key', this.key()],
          ['Idempotency-Key', this.key()],
        ],
        'two keys',
        true,
      ],
      [[['Idempotency-Key', 'f'.repeat(this.int(1000, 12_000))]], 'huge key', true],
      [
        [['Idempotency-Key', Buffer.concat([Buffer.from(this.uuid().slice(0, 30)), this.bytes(6)])]],
        'raw bytes in the key',
        true,
      ],
      [[['Idempotency-Key', `${this.uuid()}\t`]], 'trailing tab', false],
      [[['Idempotency-Key', `${this.uuid()},${this.uuid()}`]], 'a list', true],
      [[['Idempotency-Key', this.usedKey()]], 'a key already used, another body', false],
    ];
    const [headers, why, refuse] = this.pick(options);
    return { headers, why, refuse };
  }
}

/** Replaces the first `"name":` member text with `replacement`, or adds it first. */
function withMemberText(json: string, replacement: string): string {
  return `{${replacement},${json.slice(1)}`;
}

const structuredMutators: Mutator[] = [
  {
    name: 'structured/valid',
    weight: 2,
    make: (g) => ({ mutation: '', ...g.structured(JSON.stringify(g.event())) }),
  },
  {
    name: 'structured/wrong-type-attribute',
    weight: 6,
    make: (g) => {
      const attribute = g.pick(ATTRIBUTES);
      return { mutation: '', ...g.structured(JSON.stringify(g.event({ [attribute]: g.oddValue() }))) };
    },
  },
  {
    name: 'structured/missing-attribute',
    weight: 2,
    make: (g) => {
      const event = g.event();
      delete event[g.pick(['specversion', 'id', 'source', 'type'])];
      return {
        mutation: '',
        ...g.structured(JSON.stringify(event)),
        mustRefuse: 'a required attribute is missing (CE-3)',
      };
    },
  },
  {
    name: 'structured/odd-extension-name',
    weight: 2,
    make: (g) => {
      const name = g.pick([
        'Upper',
        'with-dash',
        'with_underscore',
        '',
        'a'.repeat(g.int(21, 300)),
        '💥',
        '__proto__',
        'constructor',
        'data_base64x',
        '$ref',
      ]);
      return { mutation: '', ...g.structured(JSON.stringify(g.event({ [name]: 'x' }))) };
    },
  },
  {
    name: 'structured/invalid-extension-name-null',
    weight: 1,
    make: (g) => {
      const name = g.pick(INVALID_EXTENSION_NAMES);
      return {
        mutation: '',
        ...g.structured(JSON.stringify(g.event({ [name]: null }))),
        mustRefuse: `the extension name ${JSON.stringify(name)} is invalid whatever its value (CE-1, issue 28 item 4)`,
      };
    },
  },
  {
    name: 'structured/type-breaks-dns-labels',
    weight: 1,
    make: (g) => {
      const type = g.pick(BROKEN_LABEL_TYPES);
      return {
        mutation: '',
        ...g.structured(JSON.stringify(g.event({ type }))),
        mustRefuse: `the type ${type} breaks the DNS label rules (CE-6, issue 28 item 3)`,
      };
    },
  },
  {
    name: 'structured/data-and-data_base64',
    weight: 3,
    make: (g) => {
      const event = g.event();
      delete event['data'];
      delete event['data_base64'];
      const data = g.pick([null, {}, 'x', 0, []]);
      const text = JSON.stringify({ ...event, data, data_base64: 'aGFsbG8=' });
      return {
        mutation: '',
        ...g.structured(text),
        mustRefuse: 'data and data_base64 are mutually exclusive (issue 8, item 6)',
      };
    },
  },
  {
    name: 'structured/bad-data_base64',
    weight: 3,
    make: (g) => {
      const event = g.event();
      delete event['data'];
      const value = g.pick<unknown>([
        '@@@@',
        'abc',
        'a',
        '====',
        ' aGFsbG8= ',
        'aGFsbG8',
        'aGFs\nbG8=',
        'aGFsbG8=aGFsbG8=',
        42,
        {},
        [],
        true,
        '-_-_',
        '😀',
      ]);
      return { mutation: '', ...g.structured(JSON.stringify({ ...event, data_base64: value })) };
    },
  },
  {
    name: 'structured/huge-data_base64',
    weight: 0.08,
    make: (g) => {
      const event = g.event();
      delete event['data'];
      const bytes = g.int(1, 6) * MIB;
      const valid = g.chance(0.6);
      const text = valid ? Buffer.alloc(bytes, g.int(0, 255)).toString('base64') : 'A'.repeat(bytes - 1) + '!';
      return {
        mutation: '',
        ...g.structured(JSON.stringify({ ...event, datacontenttype: 'application/octet-stream', data_base64: text })),
      };
    },
  },
  {
    name: 'structured/huge-data',
    weight: 0.08,
    make: (g) => {
      const bytes = g.int(1, 9) * MIB;
      const data = g.pick([
        () => 'x'.repeat(bytes),
        () => Array.from({ length: bytes / 16 }, (_, i) => i),
        () => ({ text: 'é'.repeat(bytes / 2) }),
      ])();
      return { mutation: '', ...g.structured(JSON.stringify(g.event({ datacontenttype: 'application/json', data }))) };
    },
  },
  {
    name: 'structured/over-api-gateway-limit',
    weight: 0.03,
    make: (g) => {
      const event = JSON.stringify(g.event({ data: 'x'.repeat(10 * MIB + g.int(1, 2 * MIB)) }));
      return { mutation: '', ...g.structured(event), mustRefuse: 'larger than API Gateway accepts' };
    },
  },
  {
    name: 'structured/deep-data',
    weight: 2,
    make: (g) => ({
      mutation: '',
      ...g.structured(
        `{"specversion":"1.0","id":"deep-${g.uuid()}","source":"${SOURCES[0]}","type":"${EVENT_TYPE}","data":${g.deep(g.pick([100, 1000, 10_000, 100_000, g.int(1, 300_000)]))}}`,
      ),
    }),
  },
  {
    name: 'structured/deep-extension',
    weight: 1,
    make: (g) => ({
      mutation: '',
      ...g.structured(withMemberText(JSON.stringify(g.event()), `"fuzzext":${g.deep(g.int(1000, 200_000))}`)),
    }),
  },
  {
    name: 'structured/deep-body',
    weight: 1,
    make: (g) => ({ mutation: '', ...g.structured(g.deep(g.int(1000, 300_000))) }),
  },
  {
    name: 'structured/duplicate-member',
    weight: 4,
    make: (g) => {
      const event = g.event();
      // Only a member the event really has is named twice: prepending `subject` to an event
      // without one is a valid event, not a duplicate. One draw whatever the event holds, so the
      // requests after this one stay the same.
      const name = g.pick(
        ['source', 'id', 'type', 'specversion', 'data', 'data_base64', 'datacontenttype', 'subject', 'time'].filter(
          (member) => member in event,
        ),
      );
      const other =
        name === 'specversion'
          ? '1.0'
          : name === 'time'
            ? '2026-02-02T00:00:00Z'
            : name === 'data'
              ? '{"other":true}'
              : name === 'data_base64'
                ? 'b3RoZXI='
                : `${String(event[name] ?? 'x')}-other`;
      const member = `${JSON.stringify(name)}:${name === 'data' ? other : JSON.stringify(other)}`;
      const text = g.chance(0.5)
        ? withMemberText(JSON.stringify(event), member)
        : `${JSON.stringify(event).slice(0, -1)},${member}}`;
      return {
        mutation: '',
        ...g.structured(text),
        mustRefuse: `the member "${name}" appears twice (issue 8, item 7)`,
      };
    },
  },
  {
    name: 'structured/escaped-duplicate-member',
    weight: 1,
    make: (g) => {
      const text = `${JSON.stringify(g.event()).slice(0, -1)},"sourc\\u0065":"urn:nld:oin:99999999999999999999"}`;
      return {
        mutation: '',
        ...g.structured(text),
        mustRefuse: 'the member "source" appears twice, once escaped (issue 8, item 7)',
      };
    },
  },
  {
    name: 'structured/invalid-utf8',
    weight: 3,
    make: (g) => {
      const text = Buffer.from(JSON.stringify(g.event({ subject: 'XXXX' })));
      const at = text.indexOf('XXXX');
      const bad = g.pick([
        [0xc3, 0x28],
        [0xff],
        [0xed, 0xa0, 0x80],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
        [0xc0, 0xaf],
        [0xe2, 0x82],
      ]);
      const body = Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at + 4)]);
      return { mutation: '', ...g.structured(body), mustRefuse: 'the body is not UTF-8 (JSON-1)' };
    },
  },
  {
    name: 'structured/raw-control-character',
    weight: 2,
    make: (g) => {
      const text = JSON.stringify(g.event({ subject: 'XXXX' })).replace(
        'XXXX',
        String.fromCharCode(g.pick([0, 1, 7, 8, 10, 13, 27, 31])),
      );
      return {
        mutation: '',
        ...g.structured(text),
        mustRefuse: 'a raw control character inside a JSON string (RFC 8259)',
      };
    },
  },
  {
    name: 'structured/truncated',
    weight: 4,
    make: (g) => {
      const text = JSON.stringify(g.event());
      return {
        mutation: '',
        ...g.structured(text.slice(0, g.int(0, text.length - 1))),
        mustRefuse: 'the JSON is cut short',
      };
    },
  },
  {
    name: 'structured/not-json',
    weight: 3,
    make: (g) => {
      const event = JSON.stringify(g.event());
      const text = g.pick([
        '',
        'null',
        'true',
        '0',
        '"event"',
        '[]',
        `[${event}]`,
        `\ufeff${event}`,
        `${event} trailing`,
        `${event.slice(0, -1)},}`,
        event.replace(/"/g, "'"),
        `/* comment */${event}`,
        `{"specversion":"1.0","id":NaN}`,
        `{"specversion":"1.0","id":1e99999}`,
        `{"specversion":"1.0","id":${'9'.repeat(g.int(100, 20_000))}}`,
        ' '.repeat(g.int(1, 2 * MIB)) + event,
        `${event}\u0000`,
        `{"__proto__":{"specversion":"1.0"},"id":"x","source":"x","type":"x"}`,
        `{"constructor":{"prototype":{"polluted":true}},"specversion":"1.0","id":"x","source":"/x","type":"x"}`,
      ]);
      return { mutation: '', ...g.structured(text) };
    },
  },
  {
    name: 'structured/many-members',
    weight: 0.5,
    make: (g) => {
      const count = g.int(1000, 50_000);
      const members = Array.from({ length: count }, (_, i) => `"x${i}":"${i}"`).join(',');
      return { mutation: '', ...g.structured(withMemberText(JSON.stringify(g.event()), members)) };
    },
  },
  {
    name: 'structured/odd-content-type',
    weight: 4,
    make: (g) => {
      const contentType = g.pick<HeaderValue>([
        'application/cloudevents+json; charset=utf-8',
        'application/cloudevents+json; charset=UTF-8',
        'application/cloudevents+json; charset="utf-8"',
        'application/cloudevents+json; charset=latin1',
        'application/cloudevents+json; charset=utf-16',
        'application/cloudevents+json; charset=',
        'application/cloudevents+json;;;',
        'application/cloudevents+json; charset=utf-8; charset=latin1',
        'APPLICATION/CLOUDEVENTS+JSON',
        ' application/cloudevents+json ',
        'application/cloudevents+json, text/plain',
        'application/cloudevents+xml',
        'application/cloudevents',
        'application/cloudevents-batch+json',
        'application/json',
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded',
        '*/*',
        '',
        ';',
        'application/cloudevents+json; foo="unterminated',
        Buffer.from([0x61, 0x70, 0x70, 0xff, 0xfe]),
        'application/cloudevents+json; charset=ü',
      ]);
      return { mutation: '', ...g.structured(JSON.stringify(g.event()), [], contentType) };
    },
  },
  {
    name: 'structured/no-content-type',
    weight: 1,
    make: (g) => {
      const request = g.structured(JSON.stringify(g.event()));
      return { mutation: '', ...request, headers: request.headers.filter(([name]) => name !== 'Content-Type') };
    },
  },
  {
    name: 'structured/datacontenttype-not-a-header-value',
    weight: 2,
    make: (g) => {
      const datacontenttype = g.pick([
        'text/plain; name="Ω"',
        'text/plain; x="\u0001"',
        'text/plain\r\nx: y',
        'text/plain; name="ſ"',
        `text/plain; x="${'\u0100'}"`,
      ]);
      return {
        mutation: '',
        ...g.structured(JSON.stringify(g.event({ datacontenttype, data: 'x' }))),
        mustRefuse: 'datacontenttype cannot travel as a Content-Type header (issue 8, item 8)',
      };
    },
  },
];

const batchMutators: Mutator[] = [
  {
    name: 'batch/valid',
    weight: 1,
    make: (g) => ({ mutation: '', ...g.batch(JSON.stringify(Array.from({ length: g.int(0, 5) }, () => g.event()))) }),
  },
  {
    name: 'batch/wrong-type-member-attribute',
    weight: 3,
    make: (g) => {
      const events = Array.from({ length: g.int(1, 5) }, () => g.event());
      events[g.int(0, events.length - 1)]![g.pick(ATTRIBUTES)] = g.oddValue();
      return { mutation: '', ...g.batch(JSON.stringify(events)) };
    },
  },
  {
    name: 'batch/duplicate-member',
    weight: 2,
    make: (g) => {
      const events = Array.from({ length: g.int(1, 4) }, () => JSON.stringify(g.event()));
      const at = g.int(0, events.length - 1);
      events[at] = withMemberText(events[at]!, '"source":"urn:nld:oin:99999999999999999999"');
      return {
        mutation: '',
        ...g.batch(`[${events.join(',')}]`),
        mustRefuse: 'a batch member has "source" twice (issue 8, item 7)',
      };
    },
  },
  {
    name: 'batch/many-invalid-members',
    weight: 0.3,
    make: (g) => {
      const count = g.pick([1000, 10_000, g.int(1, 200_000)]);
      const member = g.pick(['0', '{}', 'null', '"x"', '{"specversion":"1.0"}']);
      return { mutation: '', ...g.batch(`[${Array.from({ length: count }, () => member).join(',')}]`) };
    },
  },
  {
    // Valid, but the 202 names every event: before it was bounded it grew to megabytes, too large
    // for the idempotency item that keeps it for replays (review #11).
    name: 'batch/long-sources-and-ids',
    weight: 0.1,
    make: (g) => {
      const count = g.int(100, 1000);
      const source = `/fuzz/${'s'.repeat(g.int(500, 2000))}`;
      const idLength = g.int(500, 1500);
      const events = Array.from({ length: count }, (_, i) => ({
        specversion: '1.0',
        id: `${g.letters(8)}-${i}-${'i'.repeat(idLength)}`,
        source,
        type: EVENT_TYPE,
      }));
      return { mutation: '', ...g.batch(JSON.stringify(events)) };
    },
  },
  {
    name: 'batch/too-many-events',
    weight: 0.3,
    make: (g) => {
      const count = g.int(1001, 3000);
      return {
        mutation: '',
        ...g.batch(
          JSON.stringify(
            Array.from({ length: count }, (_, i) => ({
              specversion: '1.0',
              id: `m${i}`,
              source: '/f',
              type: EVENT_TYPE,
            })),
          ),
        ),
        mustRefuse: 'more events than one batch may hold',
      };
    },
  },
  {
    name: 'batch/mixed-specversion',
    weight: 1,
    make: (g) => ({
      mutation: '',
      ...g.batch(JSON.stringify([g.event(), g.event({ specversion: g.pick(['0.3', '2.0', 1, null]) })])),
    }),
  },
  {
    name: 'batch/nested-arrays',
    weight: 1,
    make: (g) => ({
      mutation: '',
      ...g.batch(
        g.pick([
          `[[${JSON.stringify(g.event())}]]`,
          g.deep(g.int(10, 200_000), 'array'),
          '{}',
          '[',
          `[${JSON.stringify(g.event())},]`,
          '[,]',
          '[null]',
        ]),
      ),
    }),
  },
  {
    name: 'batch/data-and-data_base64',
    weight: 1,
    make: (g) => ({
      mutation: '',
      ...g.batch(JSON.stringify([g.event(), { ...g.event(), data: null, data_base64: 'aGFsbG8=' }])),
      mustRefuse: 'data and data_base64 together in a batch member (issue 8, item 6)',
    }),
  },
  {
    name: 'batch/huge-member',
    weight: 0.05,
    make: (g) => {
      const event = g.event();
      delete event['data'];
      return {
        mutation: '',
        ...g.batch(
          JSON.stringify([
            g.event(),
            {
              ...event,
              datacontenttype: 'application/octet-stream',
              data_base64: Buffer.alloc(g.int(2, 5) * MIB).toString('base64'),
            },
          ]),
        ),
      };
    },
  },
];

const binaryMutators: Mutator[] = [
  {
    name: 'binary/valid',
    weight: 2,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      return { mutation: '', ...g.binaryRequest(headers, body, contentType) };
    },
  },
  {
    name: 'binary/bad-percent-encoding',
    weight: 4,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const at = g.int(1, headers.length - 1);
      const broken = g.pick([
        '%',
        '%G1',
        '%C3',
        '%C3%28',
        '%FF',
        '%00',
        '%E2%82',
        '%ED%A0%80',
        'abc%',
        '%%',
        '%2',
        '%c0%af',
      ]);
      headers[at] = [headers[at]![0], `${String(headers[at]![1])}${broken}`];
      // %00 decodes to valid UTF-8 (a NUL the attribute rules judge); the rest is not percent-encoded UTF-8.
      return {
        mutation: '',
        ...g.binaryRequest(headers, body, contentType),
        ...(broken === '%00' ? {} : { mustRefuse: `${headers[at]![0]} is not percent-encoded UTF-8 (HTTP-2)` }),
      };
    },
  },
  {
    name: 'binary/raw-non-utf8-bytes',
    weight: 4,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const at = g.int(1, headers.length - 1);
      const bad = Buffer.from(g.pick([[0xff], [0xc3, 0x28], [0xe9], [0x80, 0x81], [0xed, 0xa0, 0x80]]));
      headers[at] = [headers[at]![0], Buffer.concat([Buffer.from(String(headers[at]![1]), 'latin1'), bad])];
      return {
        mutation: '',
        ...g.binaryRequest(headers, body, contentType),
        mustRefuse: 'a ce- header value is not UTF-8 (issue 8, item 5)',
      };
    },
  },
  {
    name: 'binary/raw-utf8-bytes',
    weight: 1,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      headers.push(['ce-subject', Buffer.from('leerling-é-😀', 'utf8')]);
      return { mutation: '', ...g.binaryRequest(headers, body, contentType) };
    },
  },
  {
    name: 'binary/ce-datacontenttype',
    weight: 2,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      headers.push(['ce-datacontenttype', g.pick(['application/json', 'text/plain', contentType])]);
      return {
        mutation: '',
        ...g.binaryRequest(headers, body, contentType),
        mustRefuse: 'ce-datacontenttype must not be present in binary mode (issue 8, item 4)',
      };
    },
  },
  {
    name: 'binary/missing-attribute',
    weight: 2,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const gone = g.pick(['ce-id', 'ce-source', 'ce-type']);
      return {
        mutation: '',
        ...g.binaryRequest(
          headers.filter(([name]) => name !== gone),
          body,
          contentType,
        ),
        mustRefuse: `${gone} is required (CE-3)`,
      };
    },
  },
  {
    name: 'binary/odd-attribute-value',
    weight: 4,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const name = g.pick([
        'ce-specversion',
        'ce-id',
        'ce-source',
        'ce-type',
        'ce-time',
        'ce-dataschema',
        'ce-subject',
        'ce-fuzzext',
        'ce-Upper',
        'ce-',
        'ce-with_underscore',
        `ce-${'x'.repeat(g.int(21, 200))}`,
      ]);
      const value = g.pick([
        '',
        ' ',
        '0.3',
        '2.0',
        'not a time',
        '2026-02-30T00:00:00Z',
        'http://[::1',
        '%20',
        'a'.repeat(g.int(1000, 8000)),
        '"quoted"',
        'a, b',
        'urn:',
        '\t',
      ]);
      return {
        mutation: '',
        ...g.binaryRequest([...headers.filter(([n]) => n !== name), [name, value]], body, contentType),
      };
    },
  },
  {
    name: 'binary/duplicate-attribute-header',
    weight: 2,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const name = g.pick(['ce-id', 'ce-source', 'ce-type', 'ce-specversion']);
      return {
        mutation: '',
        ...g.binaryRequest([...headers, [name.toUpperCase(), 'second']], body, contentType),
        mustRefuse: `${name} sent twice is ambiguous (HTTP-2, issue 28 item 1)`,
      };
    },
  },
  {
    name: 'binary/empty-content-type',
    weight: 1,
    make: (g) => {
      const { headers, body } = g.binary();
      return {
        mutation: '',
        ...g.binaryRequest(headers, body, g.pick(['', ' '])),
        mustRefuse: 'an empty Content-Type is no media type (CE-7, issue 28 item 2)',
      };
    },
  },
  {
    name: 'binary/type-breaks-dns-labels',
    weight: 1,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const type = g.pick(BROKEN_LABEL_TYPES);
      return {
        mutation: '',
        ...g.binaryRequest([...headers.filter(([n]) => n !== 'ce-type'), ['ce-type', type]], body, contentType),
        mustRefuse: `the type ${type} breaks the DNS label rules (CE-6, issue 28 item 3)`,
      };
    },
  },
  {
    name: 'binary/quoted-string',
    weight: 1,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const [value, refuse] = g.pick<[string, string | undefined]>([
        ['"a"b"', 'an unbalanced quoted string (HTTP-2, issue 28 item 5)'],
        ['"abc', 'an unterminated quoted string (HTTP-2, issue 28 item 5)'],
        ['""', 'an empty quoted ce-id is an empty id (CE-3, issue 28 item 5)'],
        [`"fuzz-quoted-${g.letters(6)}"`, undefined],
      ]);
      return {
        mutation: '',
        ...g.binaryRequest([...headers.filter(([n]) => n !== 'ce-id'), ['ce-id', value]], body, contentType),
        ...(refuse === undefined ? {} : { mustRefuse: refuse }),
      };
    },
  },
  {
    name: 'binary/control-character-in-header',
    weight: 2,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const at = g.int(1, headers.length - 1);
      headers[at] = [
        headers[at]![0],
        `${String(headers[at]![1])}${String.fromCharCode(g.pick([0, 1, 8, 11, 12, 27, 127]))}x`,
      ];
      return {
        mutation: '',
        ...g.binaryRequest(headers, body, contentType),
        mustRefuse: 'a control character in a header value (RFC 9110 5.5)',
      };
    },
  },
  {
    name: 'binary/odd-body',
    weight: 3,
    make: (g) => {
      const { headers } = g.binary();
      const [contentType, body] = g.pick<[string | undefined, Buffer]>([
        ['application/json', Buffer.from('{"truncated":')],
        ['application/json', Buffer.from([0xff, 0xfe, 0x00])],
        ['application/json', Buffer.from(g.deep(g.int(1000, 200_000)))],
        ['text/plain', Buffer.from([0xc3, 0x28, 0xff])],
        ['text/plain; charset=latin1', Buffer.from([0xe9, 0xe8])],
        ['text/plain; charset=utf-16', Buffer.from('\ufeffhi', 'utf16le')],
        [undefined, Buffer.from('no content type')],
        ['', Buffer.from('empty content type')],
        ['application/json', Buffer.alloc(0)],
        ['application/cloudevents+json', Buffer.from('{}')],
        ['application/xml', Buffer.from('<a><b></a>')],
        ['application/json; charset=utf-8', Buffer.from(`"${'\\u0000'.repeat(100)}"`)],
        ['text/plain; name="Ω"', Buffer.from('x')],
        ['text/plain; x="\u0001"', Buffer.from('x')],
      ]);
      return { mutation: '', ...g.binaryRequest(headers, body, contentType) };
    },
  },
  {
    name: 'binary/huge-body',
    weight: 0.06,
    make: (g) => {
      const { headers } = g.binary();
      return {
        mutation: '',
        ...g.binaryRequest(
          headers,
          Buffer.alloc(g.int(1, 9) * MIB, g.int(0, 255)),
          g.pick(['application/octet-stream', 'application/json', 'text/plain']),
        ),
      };
    },
  },
  {
    name: 'binary/many-extension-headers',
    weight: 1,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      const count = g.int(50, 400);
      for (let i = 0; i < count; i++) headers.push([`ce-x${i}`, String(i)]);
      return { mutation: '', ...g.binaryRequest(headers, body, contentType) };
    },
  },
];

/** Every route: a valid request for it, with one header broken. */
const headerMutators: Mutator[] = [
  {
    name: 'headers/broken-token',
    weight: 6,
    make: (g) => {
      const { headers, why } = g.brokenAuthorization();
      const route = g.pick(['events', 'subscriptions', 'subscription', 'deliveries', 'redrive']);
      const key = ['Idempotency-Key', g.key()] as [string, string];
      const requests: Record<string, () => Omit<FuzzRequest, 'mutation'>> = {
        events: () => ({
          method: 'POST',
          target: '/events',
          headers: [...headers, key, ['Content-Type', 'application/cloudevents+json']],
          body: Buffer.from(JSON.stringify(g.event())),
        }),
        subscriptions: () => ({
          method: 'POST',
          target: '/subscriptions',
          headers: [...headers, key, ['Content-Type', 'application/json']],
          body: Buffer.from(JSON.stringify(g.subscriptionBody())),
        }),
        subscription: () => ({
          method: g.pick(['GET', 'DELETE']),
          target: `/subscriptions/${g.subscriptionId()}`,
          headers: [...headers, key],
          body: Buffer.alloc(0),
        }),
        deliveries: () => ({
          method: 'GET',
          target: `/subscriptions/${g.subscriptionId()}/${g.pick(['deliveries', 'dead-letters'])}`,
          headers,
          body: Buffer.alloc(0),
        }),
        redrive: () => ({
          method: 'POST',
          target: '/deliveries/dead-letter-queue/redrive',
          headers: [...headers, key],
          body: Buffer.alloc(0),
        }),
      };
      return { mutation: '', ...requests[route]!(), mustRefuse: `the access token is unusable (${why})` };
    },
  },
  {
    name: 'headers/broken-idempotency-key',
    weight: 5,
    make: (g) => {
      const { headers, why, refuse } = g.brokenKey();
      const route = g.pick(['events', 'subscriptions', 'patch', 'resume']);
      const requests: Record<string, () => Omit<FuzzRequest, 'mutation'>> = {
        events: () => ({
          method: 'POST',
          target: '/events',
          headers: [...g.auth('publisher'), ...headers, ['Content-Type', 'application/cloudevents+json']],
          body: Buffer.from(JSON.stringify(g.event())),
        }),
        subscriptions: () => ({
          method: 'POST',
          target: '/subscriptions',
          headers: [...g.auth('manager'), ...headers, ['Content-Type', 'application/json']],
          body: Buffer.from(JSON.stringify(g.subscriptionBody())),
        }),
        patch: () => ({
          method: 'PATCH',
          target: `/subscriptions/${g.subscriptionId()}`,
          headers: [...g.auth('manager'), ...headers, ['Content-Type', 'application/merge-patch+json']],
          body: Buffer.from('{"types":["nl.example.fuzz.v1"]}'),
        }),
        resume: () => ({
          method: 'POST',
          target: `/subscriptions/${g.subscriptionId()}/resume`,
          headers: [...g.auth('manager'), ...headers],
          body: Buffer.alloc(0),
        }),
      };
      return {
        mutation: '',
        ...requests[route]!(),
        ...(refuse ? { mustRefuse: `the Idempotency-Key is unusable (${why})` } : {}),
      };
    },
  },
  {
    name: 'headers/over-max-header-count',
    weight: 0.5,
    make: (g) => {
      const { headers, body, contentType } = g.binary();
      // Short lines, so the count passes Node's 2000 before the size passes its 16 KiB; an
      // optional attribute last, where a host that drops lines past its count loses it silently.
      const filler: HeaderList = Array.from({ length: g.int(1990, 2100) }, () => ['a', ''] as [string, string]);
      return {
        mutation: '',
        ...g.binaryRequest([...headers, ...filler, ['ce-subject', 'the-last-header']], body, contentType),
        mustRefuse: 'more header lines than the host reads (issue 8, item 12)',
      };
    },
  },
  {
    name: 'headers/many-headers',
    weight: 1,
    make: (g) => {
      const request = g.structured(JSON.stringify(g.event()));
      const filler: HeaderList = Array.from(
        { length: g.int(10, 900) },
        (_, i) => [`x-fuzz-${i}`, g.letters(g.int(0, 8))] as [string, string],
      );
      return { mutation: '', ...request, headers: [...request.headers, ...filler] };
    },
  },
  {
    name: 'headers/overlong-value',
    weight: 1,
    make: (g) => {
      const request = g.chance(0.5)
        ? g.structured(JSON.stringify(g.event()))
        : { method: 'GET', target: '/subscriptions', headers: g.auth('manager'), body: Buffer.alloc(0) };
      const name = g.pick(['x-long', 'user-agent', 'ce-subject', 'accept', 'cookie', 'traceparent']);
      return { mutation: '', ...request, headers: [...request.headers, [name, 'v'.repeat(g.int(8000, 70_000))]] };
    },
  },
  {
    name: 'headers/control-characters',
    weight: 1,
    make: (g) => {
      const request = g.structured(JSON.stringify(g.event()));
      const value = Buffer.from([0x61, g.pick([0x00, 0x01, 0x0b, 0x0c, 0x0d, 0x1b, 0x7f]), 0x62]);
      return {
        mutation: '',
        ...request,
        headers: [...request.headers, ['x-fuzz', value]],
        mustRefuse: 'a control character in a header value (RFC 9110 5.5)',
      };
    },
  },
  {
    name: 'headers/odd-names',
    weight: 1,
    make: (g) => {
      const request = { method: 'GET', target: '/subscriptions', headers: g.auth('manager'), body: Buffer.alloc(0) };
      const name = g.pick(['x fuzz', 'x\u00e9', 'x(y)', 'x"y', 'x/y', '', 'x:y', 'x{y}', 'Content-Length ', ' x']);
      return { mutation: '', ...request, headers: [...request.headers, [name, 'v']] };
    },
  },
  {
    name: 'headers/expectations',
    weight: 1,
    make: (g) => {
      const request = g.structured(JSON.stringify(g.event()));
      const extra: HeaderList = g.pick<HeaderList>([
        [['Expect', '100-continue']],
        [['Expect', 'teapot']],
        [['Accept', 'application/xml']],
        [['Accept', '*/*;q=0']],
        [['Accept-Encoding', 'gzip, br, zstd']],
        [['Content-Encoding', 'gzip']],
        [['Range', 'bytes=0-1']],
        [['TE', 'trailers']],
        [['Via', '1.1 proxy']],
        [['X-HTTP-Method-Override', 'DELETE']],
        [['Origin', 'https://evil.example']],
        [['Cookie', 'a=b; c=d']],
        [['X-Forwarded-For', '10.0.0.1']],
        [['Host', 'second-host.example']],
      ]);
      return { mutation: '', ...request, headers: [...request.headers, ...extra] };
    },
  },
];

const subscriptionMutators: Mutator[] = [
  {
    name: 'subscriptions/create-valid',
    weight: 1,
    make: (g) => ({
      mutation: '',
      method: 'POST',
      target: '/subscriptions',
      headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', 'application/json']],
      body: Buffer.from(JSON.stringify(g.subscriptionBody())),
    }),
  },
  {
    name: 'subscriptions/create-wrong-type-member',
    weight: 5,
    make: (g) => {
      const body = g.subscriptionBody({
        [g.pick([...SUBSCRIPTION_MEMBERS, 'id', 'status', 'owner', 'unknown', '__proto__'])]: g.oddValue(),
      });
      return {
        mutation: '',
        method: 'POST',
        target: '/subscriptions',
        headers: [
          ...g.auth(g.pick(['manager', 'manager', 'stranger'])),
          ['Idempotency-Key', g.key()],
          ['Content-Type', 'application/json'],
        ],
        body: Buffer.from(JSON.stringify(body)),
      };
    },
  },
  {
    // "\ud800" is valid JSON but no Unicode text: a source like it once made the route index's
    // key builder throw (a 500). The manager is entitled, so only this string can refuse it.
    name: 'subscriptions/create-unpaired-surrogate',
    weight: 1,
    make: (g) => {
      const lone = g.pick(['\ud800', '\udfff', 'x\udbff', '\udc00\ud800', '😀\ud83d']);
      const where = g.pick(['source', 'type', 'filter', 'filter-name']);
      const conditions =
        where === 'source'
          ? { source: lone }
          : where === 'type'
            ? { types: [EVENT_TYPE, lone] }
            : where === 'filter'
              ? { filters: [{ exact: { subject: lone } }] }
              : { filters: [{ exact: { [`x${lone}`]: 'y' } }] };
      const body = g.subscriptionBody(conditions);
      return {
        mutation: '',
        method: 'POST',
        target: '/subscriptions',
        headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', 'application/json']],
        body: Buffer.from(JSON.stringify(body)),
        mustRefuse: `${where} holds an unpaired surrogate, which no UTF-8 text can (review #1)`,
      };
    },
  },
  {
    name: 'subscriptions/create-odd-sink',
    weight: 2,
    make: (g) => {
      const sink = g.pick([
        'http://169.254.169.254/latest/meta-data/',
        'file:///etc/passwd',
        'http://[::1]:99999/',
        `https://${'a'.repeat(g.int(64, 5000))}.nl/hook`,
        'javascript:alert(1)',
        'https://user:pass@ontvanger.example/hook',
        'https://ontvanger.example/hook#frag',
        'https://0x7f.1/',
        'https://[fe80::1%25eth0]/',
        'http://localhost:0/',
        'HTTPS://ONTVANGER.EXAMPLE/',
        'https://ontvanger.example:65536/',
        'https://xn--nxasmq6b.example/',
        'https://ontvanger.example/%zz',
        ' https://ontvanger.example/',
        'https://ontvanger.example/\u0000',
      ]);
      return {
        mutation: '',
        method: 'POST',
        target: '/subscriptions',
        headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', 'application/json']],
        body: Buffer.from(JSON.stringify(g.subscriptionBody({ sink }))),
      };
    },
  },
  {
    name: 'subscriptions/create-odd-filters',
    weight: 3,
    make: (g) => {
      const filters = g.pick<() => unknown>([
        () => ({}),
        () => [{}],
        () => [{ exact: { type: 'x' }, prefix: { type: 'y' } }],
        () => [{ sql: "type = 'x'" }],
        () => [{ exact: { 'Bad-Name': 'x' } }],
        () => [{ exact: { type: 1 } }],
        () => [{ not: [] }],
        () => [{ all: {} }],
        () => [{ any: Array.from({ length: g.int(65, 5000) }, () => ({ exact: { type: 'x' } })) }],
        () => [{ exact: { type: 'x'.repeat(g.int(1025, 100_000)) } }],
        () => JSON.parse('[{"exact":{"__proto__":"x"}}]') as unknown,
      ]);
      let body: string;
      try {
        body = JSON.stringify(g.subscriptionBody({ filters: filters() }));
      } catch {
        body = JSON.stringify(g.subscriptionBody({ filters: [] }));
      }
      return {
        mutation: '',
        method: 'POST',
        target: '/subscriptions',
        headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', 'application/json']],
        body: Buffer.from(body),
      };
    },
  },
  {
    name: 'subscriptions/create-deep-filters',
    weight: 1,
    make: (g) => {
      const depth = g.pick([9, 100, 10_000, g.int(1, 200_000)]);
      const filters = `[${'{"not":'.repeat(depth)}{"exact":{"type":"x"}}${'}'.repeat(depth)}]`;
      const base = JSON.stringify(g.subscriptionBody());
      return {
        mutation: '',
        method: 'POST',
        target: '/subscriptions',
        headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', 'application/json']],
        body: Buffer.from(`${base.slice(0, -1)},"filters":${filters}}`),
      };
    },
  },
  {
    name: 'subscriptions/create-odd-body',
    weight: 3,
    make: (g) => {
      const [contentType, body] = g.pick<[string, string | Buffer]>([
        ['application/json', ''],
        ['application/json', 'null'],
        ['application/json', '[]'],
        ['application/json', '"sink"'],
        ['application/json', '{"sink":'],
        ['application/json', g.deep(g.int(1000, 300_000))],
        ['application/json', `${JSON.stringify(g.subscriptionBody()).slice(0, -1)},"sink":"http://169.254.169.254/"}`],
        ['application/json', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
        ['text/plain', JSON.stringify(g.subscriptionBody())],
        ['application/merge-patch+json', JSON.stringify(g.subscriptionBody())],
        ['application/json; charset=utf-16', JSON.stringify(g.subscriptionBody())],
        ['', JSON.stringify(g.subscriptionBody())],
        [
          'application/json',
          JSON.stringify(g.subscriptionBody({ types: Array.from({ length: g.int(33, 20_000) }, (_, i) => `t${i}`) })),
        ],
        ['application/json', JSON.stringify(g.subscriptionBody({ types: ['x'.repeat(g.int(1025, 500_000))] }))],
        [
          'application/json',
          `{${Array.from({ length: g.int(100, 20_000) }, (_, i) => `"unknown${i}${'x'.repeat(g.int(0, 50))}":1`).join(',')}}`,
        ],
        ['application/json', `{"${'n'.repeat(g.int(10_000, 500_000))}":1}`],
      ]);
      return {
        mutation: '',
        method: 'POST',
        target: '/subscriptions',
        headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', contentType]],
        body: Buffer.isBuffer(body) ? body : Buffer.from(body),
      };
    },
  },
  {
    name: 'subscriptions/list-odd-query',
    weight: 4,
    make: (g) => {
      const query = g.pick([
        () => `limit=${g.oddLimit()}`,
        () => `cursor=${g.oddCursor(g.subscriptionId())}`,
        () => `limit=${g.int(1, 100)}&cursor=${g.oddCursor(g.subscriptionId())}`,
        () => `cursor=${g.oddCursor(g.subscriptionId())}&cursor=${g.oddCursor(g.subscriptionId())}`,
        () => `${g.letters(4)}=${g.letters(4)}`,
        () => '&&&=&=',
        () => `limit`,
        () => `%ZZ=%ZZ`,
        () => `limit=1#fragment`,
        () => `x=${'y'.repeat(g.int(1000, 12_000))}`,
      ])();
      return {
        mutation: '',
        method: 'GET',
        target: `/subscriptions?${query}`,
        headers: g.auth(g.pick(['manager', 'manager', 'admin', 'stranger'])),
        body: Buffer.alloc(0),
      };
    },
  },
  {
    name: 'subscriptions/odd-id',
    weight: 4,
    make: (g) => {
      const method = g.pick(['GET', 'DELETE', 'PATCH']);
      return {
        mutation: '',
        method,
        target: `/subscriptions/${g.oddId()}`,
        headers: [
          ...g.auth(g.pick(['manager', 'admin'])),
          ['Idempotency-Key', g.key()],
          ...(method === 'PATCH' ? ([['Content-Type', 'application/merge-patch+json']] as HeaderList) : []),
        ],
        body: method === 'PATCH' ? Buffer.from('{"types":["nl.example.fuzz.v1"]}') : Buffer.alloc(0),
      };
    },
  },
  {
    name: 'subscriptions/patch-odd-shape',
    weight: 5,
    make: (g) => {
      const [contentType, body] = g.pick<[string, string]>([
        ['application/merge-patch+json', 'null'],
        ['application/merge-patch+json', '[]'],
        ['application/merge-patch+json', '"x"'],
        ['application/merge-patch+json', '1'],
        ['application/merge-patch+json', '{}'],
        ['application/merge-patch+json', ''],
        ['application/merge-patch+json', '{"sink":null}'],
        ['application/merge-patch+json', '{"sink":null,"types":null,"validation":null}'],
        ['application/merge-patch+json', '{"sinkcredential":{"credentialtype":null}}'],
        ['application/merge-patch+json', '{"filters":{"a":{"b":null}}}'],
        ['application/merge-patch+json', '{"__proto__":{"status":"active"}}'],
        ['application/merge-patch+json', '{"constructor":{"prototype":{"x":1}}}'],
        ['application/merge-patch+json', '{"id":"other","owner":"someone-else","status":"active"}'],
        [
          'application/merge-patch+json',
          `{"types":[${Array.from({ length: g.int(33, 5000) }, (_, i) => `"t${i}"`).join(',')}]}`,
        ],
        ['application/merge-patch+json', `{"${g.pick(SUBSCRIPTION_MEMBERS)}":${JSON.stringify(g.oddValue())}}`],
        ['application/merge-patch+json', `{"types":["a"],"types":["b"]}`],
        ['application/merge-patch+json', '{"sink":"http://169.254.169.254/"}'],
        ['application/merge-patch+json', '{"contentmode":"batch","batchsupported":"yes"}'],
        ['application/json', '{"types":["nl.example.fuzz.v1"]}'],
        ['application/json-patch+json', '[{"op":"replace","path":"/types","value":[]}]'],
        ['text/plain', '{}'],
        ['application/merge-patch+json; charset=latin1', '{}'],
      ]);
      return {
        mutation: '',
        method: 'PATCH',
        target: `/subscriptions/${g.subscriptionId()}`,
        headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', contentType]],
        body: Buffer.from(body),
      };
    },
  },
  {
    name: 'subscriptions/patch-deep',
    weight: 2,
    make: (g) => {
      const depth = g.pick([100, 1000, 10_000, g.int(1, 300_000)]);
      const member = g.pick(['filters', 'sinkcredential', 'unknown', 'types', 'sink']);
      const body = `{"${member}":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
      return {
        mutation: '',
        method: 'PATCH',
        target: `/subscriptions/${g.subscriptionId()}`,
        headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', 'application/merge-patch+json']],
        body: Buffer.from(body),
      };
    },
  },
  {
    name: 'subscriptions/validation-callback',
    weight: 2,
    make: (g) => {
      const token = g.pick(['', 'x', 'a'.repeat(g.int(100, 12_000)), '%ZZ', '%00', `${g.letters(43)}`]);
      return {
        mutation: '',
        method: g.pick(['GET', 'POST']),
        target: `/subscriptions/${g.chance(0.7) ? g.subscriptionId() : g.oddId()}/validation${g.chance(0.8) ? `?token=${token}` : ''}`,
        headers: g.chance(0.5) ? [['WebHook-Allowed-Rate', g.pick(['*', '0', '-1', '1e9', 'abc', '120', ''])]] : [],
        body: Buffer.alloc(0),
      };
    },
  },
];

const deliveryMutators: Mutator[] = [
  {
    name: 'deliveries/list-odd-query',
    weight: 4,
    make: (g) => {
      const id = g.subscriptionId();
      const list = g.pick(['deliveries', 'dead-letters']);
      const query = g.pick([
        () => `limit=${g.oddLimit()}`,
        () => `cursor=${g.oddCursor(id)}`,
        () => `limit=${g.int(1, 100)}&cursor=${g.oddCursor(id)}`,
        () => 'cursor=&limit=',
      ])();
      return {
        mutation: '',
        method: 'GET',
        target: `/subscriptions/${id}/${list}?${query}`,
        headers: g.auth(g.pick(['manager', 'admin', 'stranger'])),
        body: Buffer.alloc(0),
      };
    },
  },
  {
    name: 'deliveries/odd-id',
    weight: 2,
    make: (g) => {
      const what = g.pick(['deliveries', 'dead-letters', 'dead-letters/redrive', 'resume']);
      const post = what === 'dead-letters/redrive' || what === 'resume';
      return {
        mutation: '',
        method: post ? 'POST' : 'GET',
        target: `/subscriptions/${g.oddId()}/${what}`,
        headers: [
          ...g.auth(g.pick(['manager', 'admin'])),
          ...(post
            ? ([
                ['Idempotency-Key', g.key()],
                ['Content-Type', 'application/json'],
              ] as HeaderList)
            : []),
        ],
        body: what === 'dead-letters/redrive' ? Buffer.from('{"all":true}') : Buffer.alloc(0),
      };
    },
  },
  {
    name: 'deliveries/redrive-odd-body',
    weight: 3,
    make: (g) => {
      const body = g.pick([
        '',
        '{}',
        'null',
        '[]',
        '{"all":true}',
        '{"all":false}',
        '{"all":"true"}',
        '{"all":true,"deliveryIds":["x"]}',
        '{"deliveryIds":[]}',
        `{"deliveryIds":[${Array.from({ length: g.int(1, 3000) }, () => `"${g.uuid()}"`).join(',')}]}`,
        '{"deliveryIds":[1,2]}',
        `{"deliveryIds":["${'d'.repeat(g.int(1025, 50_000))}"]}`,
        `{"deliveryIds":${g.deep(g.int(100, 100_000), 'array', '"x"')}}`,
        '{"all":true,"all":false}',
        '{"__proto__":{"all":true}}',
        g.deep(g.int(1000, 200_000)),
      ]);
      return {
        mutation: '',
        method: 'POST',
        target: `/subscriptions/${g.subscriptionId()}/dead-letters/redrive`,
        headers: [...g.auth('manager'), ['Idempotency-Key', g.key()], ['Content-Type', 'application/json']],
        body: Buffer.from(body),
      };
    },
  },
  {
    name: 'deliveries/resume-and-queue-redrive',
    weight: 2,
    make: (g) => {
      const queue = g.chance(0.5);
      return {
        mutation: '',
        method: 'POST',
        target: queue ? '/deliveries/dead-letter-queue/redrive' : `/subscriptions/${g.subscriptionId()}/resume`,
        headers: [
          ...g.auth(g.pick(['manager', 'admin', 'wrongScope'])),
          ['Idempotency-Key', g.key()],
          ...(g.chance(0.5)
            ? ([
                ['Content-Type', g.pick(['application/json', 'text/plain', 'application/cloudevents+json'])],
              ] as HeaderList)
            : []),
        ],
        body: g.chance(0.5)
          ? Buffer.alloc(0)
          : Buffer.from(g.pick(['{}', '[]', 'garbage', g.deep(g.int(10, 100_000))])),
      };
    },
  },
];

const otherMutators: Mutator[] = [
  {
    name: 'other/unauthenticated-routes',
    weight: 3,
    make: (g) => {
      const [method, target] = g.pick<[string, string]>([
        ['GET', '/openapi.json'],
        ['GET', '/openapi.json?x=1'],
        ['GET', '/health'],
        ['GET', '/.well-known/jwks.json'],
        ['HEAD', '/openapi.json'],
        ['HEAD', '/health'],
        ['POST', '/openapi.json'],
        ['DELETE', '/health'],
        ['OPTIONS', '/openapi.json'],
      ]);
      return {
        mutation: '',
        method,
        target,
        headers: g.chance(0.5) ? g.brokenAuthorization().headers : [],
        body: g.chance(0.2) ? Buffer.from('{"unexpected":"body"}') : Buffer.alloc(0),
      };
    },
  },
  {
    name: 'other/options-validation-request',
    weight: 2,
    make: (g) => {
      const headers: HeaderList = [];
      if (g.chance(0.8))
        headers.push([
          'WebHook-Request-Origin',
          g.pick([
            'publisher.example',
            '',
            '*',
            'a'.repeat(g.int(100, 8000)),
            'evil.example, other.example',
            Buffer.from([0xff, 0xfe]),
          ]),
        ]);
      if (g.chance(0.5)) headers.push(['WebHook-Request-Rate', g.pick(['120', '*', '-1', '0', 'abc', '1e400', ''])]);
      if (g.chance(0.5))
        headers.push([
          'WebHook-Request-Callback',
          g.pick(['https://publisher.example/cb', 'not a url', 'http://169.254.169.254/', '']),
        ]);
      return {
        mutation: '',
        method: 'OPTIONS',
        target: '/events',
        headers,
        body: g.chance(0.2) ? Buffer.from('body on OPTIONS') : Buffer.alloc(0),
      };
    },
  },
  {
    name: 'other/oauth-token-endpoint',
    weight: 2,
    make: (g) => {
      const body = g.pick([
        '',
        'grant_type=client_credentials',
        'grant_type=client_credentials&client_id=dev-publisher&client_secret=wrong',
        'grant_type=password&username=a&password=b',
        'grant_type=client_credentials&client_id=%ZZ&client_secret=%',
        `grant_type=client_credentials&client_id=${'a'.repeat(g.int(1000, 50_000))}&client_secret=x`,
        'grant_type=client_credentials&client_id=dev-publisher&client_id=dev-subscriber&client_secret=x',
        '{"grant_type":"client_credentials"}',
        'grant_type=client_credentials&client_id=dev-publisher&client_secret=x&scope=%00',
      ]);
      const contentType = g.pick([
        'application/x-www-form-urlencoded',
        'application/json',
        'text/plain',
        'application/x-www-form-urlencoded; charset=latin1',
      ]);
      return {
        mutation: '',
        method: 'POST',
        target: '/oauth/token',
        headers: [
          ['Content-Type', contentType],
          ...(g.chance(0.3)
            ? ([
                ['Authorization', g.pick(['Basic %%%', 'Basic ZGV2LXB1Ymxpc2hlcjp3cm9uZw==', 'Basic', 'Bearer x'])],
              ] as HeaderList)
            : []),
        ],
        body: Buffer.from(body),
      };
    },
  },
  {
    name: 'other/unknown-path',
    weight: 3,
    make: (g) => {
      const target = g.pick([
        '/',
        '/nope',
        '/events/extra',
        '//events',
        '/events/',
        '/EVENTS',
        '/subscriptions/',
        '/subscriptions//deliveries',
        `/subscriptions/${g.uuid()}/unknown`,
        `/subscriptions/${g.uuid()}/dead-letters/unknown`,
        '/deliveries',
        '/deliveries/dead-letter-queue',
        '/openapi.json/',
        '/health/x',
        '/.well-known/',
        '/oauth/',
        `/${'a'.repeat(g.int(1000, 12_000))}`,
        '/%ZZ',
        '/%00',
        '/events%2F',
        '/./events',
        '/../events',
        '/events;x=1',
        '/événements',
        `/${'a/'.repeat(g.int(100, 3000))}`,
      ]);
      return {
        mutation: '',
        method: g.pick(['GET', 'POST', 'DELETE', 'PATCH', 'PUT']),
        target,
        headers: g.chance(0.5) ? g.auth(g.pick(['publisher', 'manager'])) : [],
        body: Buffer.alloc(0),
      };
    },
  },
  {
    name: 'other/unexpected-method',
    weight: 3,
    make: (g) => {
      const target = g.pick([
        '/events',
        '/subscriptions',
        `/subscriptions/${g.subscriptionId()}`,
        `/subscriptions/${g.subscriptionId()}/deliveries`,
        `/subscriptions/${g.subscriptionId()}/resume`,
        '/deliveries/dead-letter-queue/redrive',
        '/health',
        '/oauth/token',
        '/.well-known/jwks.json',
      ]);
      const method = g.pick([
        'GET',
        'PUT',
        'DELETE',
        'PATCH',
        'HEAD',
        'OPTIONS',
        'POST',
        'TRACE',
        'PROPFIND',
        'PURGE',
        'LINK',
        'SEARCH',
        'REPORT',
        'MKCOL',
      ]);
      return {
        mutation: '',
        method,
        target,
        headers: [...g.auth(g.pick(['publisher', 'manager', 'admin'])), ['Idempotency-Key', g.key()]],
        body: Buffer.alloc(0),
      };
    },
  },
  {
    name: 'other/odd-request-target',
    weight: 1,
    make: (g) => {
      const target = g.pick([
        '*',
        `http://127.0.0.1/subscriptions`,
        'http://other.example/health',
        '/subscriptions?',
        '/subscriptions?&',
        '/subscriptions??limit=1',
        '/health#frag',
        '/health?%',
        `/health?${'q'.repeat(g.int(1000, 12_000))}`,
      ]);
      return {
        mutation: '',
        method: g.pick(['GET', 'OPTIONS']),
        target,
        headers: g.auth('manager'),
        body: Buffer.alloc(0),
      };
    },
  },
];

const MUTATORS: readonly Mutator[] = [
  ...structuredMutators,
  ...batchMutators,
  ...binaryMutators,
  ...headerMutators,
  ...subscriptionMutators,
  ...deliveryMutators,
  ...otherMutators,
];

/** A short, stable fingerprint of a request's bytes, for naming repro files and spotting repeats. */
export function requestDigest(request: FuzzRequest): string {
  const hash = createHash('sha256');
  hash.update(`${request.method} ${request.target}\n`);
  for (const [name, value] of request.headers) hash.update(`${name}:`).update(value).update('\n');
  return hash.update(request.body).digest('hex').slice(0, 12);
}
