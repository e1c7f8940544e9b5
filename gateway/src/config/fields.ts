import { z } from "zod";

// Field builders shared by the schema sections, so each kind of value is checked, and worded, one way.

/** A whole number in [min, max]; the message names the range, which is what the user needs to fix it. */
export function intInRange(min: number, max: number) {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.int({ error }).min(min, { error }).max(max, { error });
}

/** Seconds in [min, max] with a default, described for the README and editors. */
export function secondsField(min: number, max: number, fallback: number, what: string) {
  return intInRange(min, max).default(fallback).describe(`${what}, in seconds (${min}-${max})`);
}

export function nameField(what: string) {
  return z
    .string({ error: "must be a string" })
    .min(1, { error: "must not be empty" })
    .max(255, { error: "must be at most 255 characters" })
    .describe(`${what} (1-255 characters)`);
}

export function httpUrl(what: string) {
  return z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).describe(what);
}

export function httpsUrl(what: string) {
  return z.url({ protocol: /^https$/, error: "must be an https:// URL" }).describe(what);
}

export function nonEmptyString(what: string) {
  return z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }).describe(what);
}

export function stringList(what: string) {
  return z
    .array(z.string({ error: "must be a string" }), { error: "must be a list of strings" })
    .describe(what);
}

export function flag(fallback: boolean, what: string) {
  return z.boolean({ error: "must be true or false" }).default(fallback).describe(what);
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T, what: string) {
  return z.enum(values, { error: `must be one of: ${values.join(", ")}` }).describe(what);
}
