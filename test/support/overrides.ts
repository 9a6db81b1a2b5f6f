/**
 * Fields a test fixture replaces. An optional field given as `undefined` is one the fixture must
 * not have (say a subscription without a credential): the fixture spreads it over its defaults,
 * and the code under test reads an undefined field as an absent one.
 */
export type Overrides<T> = { [K in keyof T]?: K extends OptionalKeys<T> ? T[K] | undefined : T[K] };

type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
