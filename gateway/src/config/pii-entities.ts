// The entity types the built-in recognizers detect, by Presidio's names. A dependency-free list so the config
// schema can refuse an unknown `recognizers[].entity_type` at load without pulling the recognizers in.

export const ENTITY_TYPES = [
  "EMAIL_ADDRESS",
  "CREDIT_CARD",
  "US_SSN",
  "PHONE_NUMBER",
  "IP_ADDRESS",
  "URL",
  "IBAN_CODE",
  "US_BANK_NUMBER",
  "US_PASSPORT",
  "US_DRIVER_LICENSE",
  "US_ITIN",
  "CRYPTO",
  "DATE_TIME",
  "MEDICAL_LICENSE",
  "UK_NHS",
] as const;

export type EntityType = (typeof ENTITY_TYPES)[number];

/**
 * Recognizers that run when scrubbing is on and no layer mentions them. URL and DATE_TIME are opt-in: in the
 * measurements of docs/scrubbing.md they fire on most ordinary tool traffic (links, timestamps), which a
 * model usually needs intact, and neither is personal data by itself.
 */
export const OPT_IN_ENTITY_TYPES: ReadonlySet<EntityType> = new Set<EntityType>(["URL", "DATE_TIME"]);

export function isEntityType(name: string): name is EntityType {
  return (ENTITY_TYPES as readonly string[]).includes(name);
}

/**
 * Presidio entity types the SPEC names as optional that the gateway does not recognise: names and places need a
 * language model (Presidio runs spaCy's named-entity recognition), which the gateway does not ship. A configuration
 * asking for one is refused with this reason rather than a bare list of what is known.
 */
export const UNSUPPORTED_ENTITY_TYPES: Readonly<Record<string, string>> = {
  PERSON: "names",
  LOCATION: "places",
};

/** The problem message for an entity_type that is not one of ENTITY_TYPES. */
export function unknownEntityTypeMessage(input: unknown): string {
  const known = `must be one of: ${ENTITY_TYPES.join(", ")}`;
  if (typeof input !== "string" || !Object.hasOwn(UNSUPPORTED_ENTITY_TYPES, input)) return known;
  return (
    `${input} is not supported: recognising ${UNSUPPORTED_ENTITY_TYPES[input]} needs a language model, which the ` +
    `gateway does not run (the SPEC makes ${Object.keys(UNSUPPORTED_ENTITY_TYPES).join(" and ")} optional); list ` +
    `the names you must scrub in custom_rules instead. Supported: ${ENTITY_TYPES.join(", ")}`
  );
}
