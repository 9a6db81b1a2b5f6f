/**
 * What S3's XML answers say, for the lean S3 client (./s3-requests.ts): a ListObjectsV2 page and
 * an error's `Code`. S3 escapes keys in XML (`&amp;`, `&#x..;`); they are unescaped here.
 */
export interface S3ListPage {
  readonly keys: string[];
  readonly isTruncated: boolean;
  readonly nextContinuationToken: string | undefined;
}

export function listPageOf(xml: string): S3ListPage {
  const keys = [...xml.matchAll(/<Contents>[\s\S]*?<\/Contents>/g)].map((contents) => unescapeXml(/<Key>([\s\S]*?)<\/Key>/.exec(contents[0])?.[1] ?? ''));
  const token = /<NextContinuationToken>([\s\S]*?)<\/NextContinuationToken>/.exec(xml)?.[1];
  return {
    keys,
    isTruncated: /<IsTruncated>\s*true\s*<\/IsTruncated>/.test(xml),
    nextContinuationToken: token === undefined ? undefined : unescapeXml(token),
  };
}

/** S3's error `Code` from its XML body; a HEAD answer has none, so the status names it as the SDK does. */
export function errorCode(statusCode: number, body: string): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
  if (code) return unescapeXml(code);
  if (statusCode === 404) return 'NotFound';
  if (statusCode === 403) return 'Forbidden';
  return statusCode >= 500 ? 'InternalError' : `HTTP${statusCode}`;
}

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, entity: string) => {
    if (entity.startsWith('#x')) return String.fromCodePoint(parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(parseInt(entity.slice(1), 10));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[entity]!;
  });
}
