// What `run.seed()` accepts: entities checked and normalised before anything is
// derived from them. Every refusal is an AliasError with a stable code.

/** One real value to put a persona in front of (`role: "public"` values are never replaced). */
export interface SeedEntity {
  type: string;
  value: string;
  role?: "public" | "private";
  /** Groups the attributes of one person or organisation, so their aliases agree. */
  identity?: string;
}

export type AliasErrorCode =
  "rules_alias_bad_seed" | "rules_alias_too_many_seeds" | "rules_alias_bad_key" | "rules_alias_text_too_large" | "rules_alias_too_deep";

export class AliasError extends Error {
  override readonly name = "AliasError";
  constructor(
    readonly code: AliasErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Seeds per run: 10,000 must work; the bound keeps the automaton and the legend to tens of MiB. */
export const MAX_SEEDS = 20_000;
/** Characters in one seed's value. */
export const MAX_SEED_VALUE = 512;
/** Characters in one identity label. */
export const MAX_IDENTITY = 128;

/** The kinds with a derivation of their own; any other `type` gets `REF-nnnn`. */
export const KINDS = ["person_name", "email", "username", "phone", "company", "domain", "ip", "account", "machine", "log"] as const;

/** A seed after checking: value trimmed with whitespace collapsed (emails, domains, usernames lower-cased). */
export interface Seed {
  index: number;
  type: string;
  value: string;
  role: "public" | "private";
  identity?: string;
  /** Whose persona it shares: `id:<identity>`, else `<type>:<folded value>`. */
  identityKey: string;
}

const TYPE = /^[a-z][a-z0-9_]{0,31}$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
const LOWER_CASED = new Set(["email", "domain", "username"]);

export function checkSeeds(entities: unknown, already: number): Seed[] {
  if (!Array.isArray(entities)) throw new AliasError("rules_alias_bad_seed", "seed() takes a list of { type, value, role?, identity? }");
  if (already + entities.length > MAX_SEEDS)
    throw new AliasError(
      "rules_alias_too_many_seeds",
      `a run holds at most ${MAX_SEEDS} seeds (this would make ${already + entities.length})`,
    );
  return entities.map((entity, offset) => checkSeed(entity, already + offset));
}

function checkSeed(entity: unknown, index: number): Seed {
  const bad = (why: string) => new AliasError("rules_alias_bad_seed", `seed ${index}: ${why}`);
  if (entity === null || typeof entity !== "object" || Array.isArray(entity))
    throw bad("must be an object { type, value, role?, identity? }");
  const { type, value, role, identity, ...rest } = entity as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw bad(`unknown key "${extra}" (type, value, role, identity)`);
  if (typeof type !== "string" || !TYPE.test(type)) throw bad("type must be a lower-case word such as person_name or email");
  if (typeof value !== "string") throw bad("value must be a string");
  let text = value.trim().replace(/\s+/g, " ");
  if (text === "") throw bad("value is empty");
  if (text.length > MAX_SEED_VALUE) throw bad(`value is longer than ${MAX_SEED_VALUE} characters`);
  if (CONTROL.test(text)) throw bad("value holds control characters");
  if (role !== undefined && role !== "public" && role !== "private") throw bad('role must be "public" or "private"');
  if (
    identity !== undefined &&
    (typeof identity !== "string" || identity === "" || identity.length > MAX_IDENTITY || CONTROL.test(identity))
  )
    throw bad(`identity must be a label of 1 to ${MAX_IDENTITY} characters without control characters`);
  if (LOWER_CASED.has(type)) text = text.toLowerCase();
  if (type === "person_name" && text.includes(",")) {
    // "Nowell, Matthew" is the same person as "Matthew Nowell".
    const [surname, given] = text.split(",", 2).map((part) => part.trim());
    if (surname && given) text = `${given} ${surname}`;
  }
  if (type === "email" && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(text)) throw bad("an email needs one @ and a domain with a dot");
  if (type === "domain" && !/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(text))
    throw bad("a domain is labels of letters, digits and - joined by dots");
  if (type === "phone" && !/^\+?[\d\s().\-/]+$/.test(text)) throw bad("a phone is digits with an optional + and separators");
  if (type === "phone" && !/^\d{7,15}$/.test(text.replace(/\D/g, ""))) throw bad("a phone has 7 to 15 digits");
  if (type === "ip" && ipVersion(text) === 0) throw bad("an ip is a dotted IPv4 or a colon IPv6 address");
  return {
    index,
    type,
    value: text,
    role: role ?? "private",
    ...(identity === undefined ? {} : { identity }),
    identityKey: identity === undefined ? `${type}:${text.toLowerCase()}` : `id:${identity}`,
  };
}

export function ipVersion(text: string): 0 | 4 | 6 {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) return v4.slice(1).every((octet) => Number(octet) <= 255) ? 4 : 0;
  return /^[0-9a-f:]+$/i.test(text) && text.includes(":") && text.split(":").length <= 8 ? 6 : 0;
}
