/**
 * What a program reads is the API's objects under JavaScript names: `renews_at` becomes `renewsAt`,
 * nested objects and lists alike. The types follow the SDK's wire types, so a field the API adds
 * reaches programs without a second list of names to keep in step.
 */

type CamelCase<Name extends string> = Name extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : Name;

export type Camelized<T> = T extends readonly (infer Element)[]
  ? Camelized<Element>[]
  : T extends object
    ? { [K in keyof T as K extends string ? CamelCase<K> : K]: Camelized<T[K]> }
    : T;

const camelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

export function camelized<T>(value: T): Camelized<T> {
  if (Array.isArray(value)) return value.map(camelized) as Camelized<T>;
  if (value === null || typeof value !== "object") return value as Camelized<T>;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [camelCase(key), camelized(field)]),
  ) as Camelized<T>;
}
