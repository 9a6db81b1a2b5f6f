/** The API's version, sent as `API-Version` on every answer (Logius API Design Rules, /core/version-header). */
export const API_VERSION = '1.0.0';
/**
 * The API's major version in every URI (Logius API Design Rules, /core/uri-version): the API is
 * served under `/v1`, from this one constant (functions/config/resources.ts gives API Gateway and the laptop
 * gateway their routes with it). RFC 8615 well-known resources stay at the origin's root.
 */
export const API_BASE_PATH = `/v${API_VERSION.split('.')[0]}`;
