// Aliases from the run key: HMAC-SHA-256 over a labelled message, its bytes read as
// big-endian 32-bit numbers that pick from the word lists. docs/alias.md is the
// specification; fixtures/hooks/alias-vectors.json pins it.
import { COMPANY_WORDS, GIVEN_NAMES, SURNAMES } from "./names.ts";
import { AliasError, ipVersion, KINDS, type Seed } from "./seeds.ts";

/** Re-derivations tried before a seed is refused (never reached within MAX_SEEDS). */
const MAX_ATTEMPTS = 1000;
/** Below this attempt a phone stays in `+1 999 555 01xx`, an IPv4 in the 762 documentation addresses, a REF in 4 digits. */
const NARROW_ATTEMPTS = 32;

/** The run key: 32 bytes as 64 hex digits. */
export function newRunKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** HMAC-SHA-256 of `message` under `key`. */
export type HmacSha256 = (key: Uint8Array, message: Uint8Array) => Uint8Array | Promise<Uint8Array>;

/** Web Crypto's HMAC-SHA-256, which every runtime the core runs on has. */
function webCryptoHmac(key: Uint8Array<ArrayBuffer>): (message: Uint8Array) => Promise<Uint8Array> {
  const imported = crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  // A copy types the few bytes as ArrayBuffer-backed, as sign() asks, whatever the runtime's encoder returns.
  return async (message) => new Uint8Array(await crypto.subtle.sign("HMAC", await imported, new Uint8Array(message)));
}

export class Hmac {
  readonly #sign: (message: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  constructor(hexKey: string, hmacSha256?: HmacSha256) {
    if (!/^[0-9a-f]{64}$/.test(hexKey))
      throw new AliasError("rules_alias_bad_key", "the run key must be 64 lower-case hex digits (32 bytes)");
    const key = new Uint8Array(32);
    for (let i = 0; i < 32; i++) key[i] = parseInt(hexKey.slice(i * 2, i * 2 + 2), 16);
    this.#sign = hmacSha256 ? (message) => hmacSha256(key, message) : webCryptoHmac(key);
  }
  /** HMAC-SHA-256 of the parts joined by "\n", as eight big-endian uint32. */
  async words(...parts: (string | number)[]): Promise<Uint32Array> {
    const mac = await this.#sign(new TextEncoder().encode(parts.join("\n")));
    const view = new DataView(mac.buffer, mac.byteOffset, mac.byteLength);
    return Uint32Array.from({ length: 8 }, (_, i) => view.getUint32(i * 4));
  }
}

export interface NamePersona {
  given: string;
  surname: string;
  attempt: number;
}
export interface CompanyPersona {
  word: string;
  name: string;
  attempt: number;
}

/** A seed with its alias and what its variants are built from. */
export interface Derived {
  seed: Seed;
  alias: string;
  /** For names: the real and alias given name and surname. */
  name?: { real: { given: string; surname: string }; alias: { given: string; surname: string } };
  attempt: number;
}

export interface DeriveOptions {
  publicLayerWins: boolean;
  publicMailboxDomains: ReadonlySet<string>;
}

const fold = (text: string) => text.toLowerCase();
/**
 * A word of several parts (`Verity-Hale`): never minted. A model writes half of it (`Delphine Verity`),
 * half maps back and half does not, and the user's files get a mixed identity. The pinned lists keep
 * their compound entries (positions are the derivation); a draw that lands on one is drawn again.
 */
const compound = (word: string) => /[-\s]/.test(word);
/** Kinds whose alias comes from a persona (a name, a company), not from words drawn for the seed itself. */
const WORDLESS_KINDS: ReadonlySet<string> = new Set(["person_name", "username", "email", "company", "domain"]);
/** Letters and digits only, accents dropped: `Vasquez-Lowe` → `vasquezlowe`. */
export const asciiWord = (text: string) =>
  text
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "");
/** Words kept, joined by `-`: `Tidewater Wexler` → `tidewater-wexler`. */
export const slug = (text: string) =>
  text
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

/** Given name and surname of a person's value: first and last word. */
export function nameParts(value: string): { given: string; surname: string } {
  const words = value.split(" ");
  return { given: words[0]!, surname: words[words.length - 1]! };
}

const LEGAL_SUFFIX =
  /\s+(ltd\.?|limited|inc\.?|incorporated|llc|llp|plc|gmbh|ag|sa|s\.a\.|bv|b\.v\.|nv|corp\.?|corporation|co\.?|company|pty ltd|srl|sarl|oy|ab|as)$/i;
export function companyParts(value: string): { base: string; suffix: string } {
  const match = LEGAL_SUFFIX.exec(value);
  return match ? { base: value.slice(0, match.index), suffix: match[0].trim() } : { base: value, suffix: "" };
}

const DOC_V4 = ["192.0.2.", "198.51.100.", "203.0.113."];

/** Every seed's alias, in seed order. Public seeds alias to themselves. */
export async function deriveAll(hmac: Hmac, seeds: readonly Seed[], options: DeriveOptions): Promise<Derived[]> {
  const privateSeeds = seeds.filter((seed) => seed.role === "private");
  const keepsDomain = domainKeeper(seeds, options);
  const publicValues = new Set(seeds.filter((seed) => seed.role === "public").map((seed) => fold(seed.value)));
  // Words an alias name must not reuse: a real name's words would be counted as leaks, and mapped both ways.
  const realWords = new Set<string>();
  for (const seed of seeds) for (const word of seed.value.split(/[^\p{L}\p{N}]+/u)) if (word) realWords.add(fold(word));

  const names = await personas(
    seeds.filter((seed) => seed.role === "private" && (seed.type === "person_name" || seed.type === "username" || seed.type === "email")),
    async (key, attempt) => {
      const [g, s] = await hmac.words("name", key, attempt);
      return { given: GIVEN_NAMES[g! % GIVEN_NAMES.length]!, surname: SURNAMES[s! % SURNAMES.length]!, attempt };
    },
    (persona) => `${persona.given} ${persona.surname}`,
    (persona) => realWords.has(fold(persona.given)) || realWords.has(fold(persona.surname)) || compound(persona.surname),
  );

  // Company personas: seeded companies and domains, then the domains of private emails that need one.
  const domainSeeds = new Map(privateSeeds.filter((seed) => seed.type === "domain").map((seed) => [seed.value, seed]));
  const emailDomains = privateSeeds
    .filter((seed) => seed.type === "email")
    .map((seed) => seed.value.split("@")[1]!)
    .filter((domain) => !domainSeeds.has(domain) && !keepsDomain(domain));
  const companyKeys = [
    ...privateSeeds.filter((seed) => seed.type === "company" || seed.type === "domain"),
    ...emailDomains.map((domain) => ({ identityKey: `domain:${domain}` })),
  ];
  const companies = await personas(
    companyKeys,
    async (key, attempt) => {
      const [w, n] = await hmac.words("company", key, attempt);
      return { word: COMPANY_WORDS[w! % COMPANY_WORDS.length]!, name: SURNAMES[n! % SURNAMES.length]!, attempt };
    },
    (persona) => `${persona.word} ${persona.name}`,
    (persona) => realWords.has(fold(persona.word)) || realWords.has(fold(persona.name)) || compound(persona.word) || compound(persona.name),
  );
  const domainOf = (key: string) => {
    const company = companies.get(key)!;
    return `${slug(`${company.word} ${company.name}`)}.alias`;
  };

  const taken = new Map<string, string>(); // folded alias → folded real value it stands for
  const claim = (alias: string, seed: Seed) => {
    const owner = taken.get(fold(alias));
    if (owner !== undefined && owner !== fold(seed.value)) return false;
    if (publicValues.has(fold(alias))) return false;
    taken.set(fold(alias), fold(seed.value));
    return true;
  };

  // Kinds whose alias is drawn straight from HMAC words: attempt 0 of all of them at once (the HMACs are
  // independent, and one at a time most of the time went to waiting on each); a taken alias draws again, in order.
  const drawsWords = (seed: Seed) => seed.role === "private" && !WORDLESS_KINDS.has(seed.type);
  const draw = (seed: Seed, attempt: number) => {
    const label = (KINDS as readonly string[]).includes(seed.type) ? seed.type : "ref";
    return hmac.words(label, ...(label === "ref" ? [seed.type] : []), seed.identityKey, fold(seed.value), attempt);
  };
  const drawn = seeds.filter(drawsWords);
  const firstDraws = new Map(await Promise.all(drawn.map(async (seed) => [seed, await draw(seed, 0)] as const)));

  const out: Derived[] = [];
  for (const seed of seeds) {
    if (seed.role === "public") {
      out.push({ seed, alias: seed.value, attempt: 0 });
      continue;
    }
    const name = names.get(seed.identityKey);
    switch (seed.type) {
      case "person_name": {
        const alias = `${name!.given} ${name!.surname}`;
        claim(alias, seed);
        out.push({ seed, alias, name: { real: nameParts(seed.value), alias: name! }, attempt: name!.attempt });
        break;
      }
      case "username":
      case "email": {
        const local =
          seed.type === "username"
            ? asciiWord(name!.given).slice(0, 1) + asciiWord(name!.surname)
            : `${slug(name!.given)}.${slug(name!.surname)}`;
        const domain = seed.type === "email" ? seed.value.split("@")[1]! : undefined;
        const aliasDomain =
          domain === undefined
            ? undefined
            : keepsDomain(domain)
              ? domain
              : domainSeeds.has(domain)
                ? domainOf(domainSeeds.get(domain)!.identityKey)
                : domainOf(`domain:${domain}`);
        // A second email or handle of the same persona gets a number: keith.wexler2@…
        let alias = "";
        let attempt = 0;
        for (; attempt < MAX_ATTEMPTS; attempt++) {
          const candidate = `${local}${attempt === 0 ? "" : attempt + 1}`;
          alias = aliasDomain === undefined ? candidate : `${candidate}@${aliasDomain}`;
          if (claim(alias, seed)) break;
        }
        out.push({ seed, alias, attempt });
        break;
      }
      case "company": {
        const company = companies.get(seed.identityKey)!;
        const suffix = companyParts(seed.value).suffix;
        const alias = `${company.word} ${company.name}${suffix ? ` ${suffix}` : ""}`;
        claim(alias, seed);
        out.push({ seed, alias, attempt: company.attempt });
        break;
      }
      case "domain": {
        const alias = domainOf(seed.identityKey);
        claim(alias, seed);
        out.push({ seed, alias, attempt: companies.get(seed.identityKey)!.attempt });
        break;
      }
      default: {
        let attempt = 0;
        for (; ; attempt++) {
          if (attempt === MAX_ATTEMPTS)
            throw new AliasError("rules_alias_bad_seed", `seed ${seed.index}: no free ${seed.type} alias after ${MAX_ATTEMPTS} attempts`);
          const words = attempt === 0 ? firstDraws.get(seed)! : await draw(seed, attempt);
          const alias = hashed(seed, words, attempt);
          if (claim(alias, seed)) {
            out.push({ seed, alias, attempt });
            break;
          }
        }
      }
    }
  }
  return out;
}

/** The alias of a kind drawn straight from HMAC words. */
function hashed(seed: Seed, words: Uint32Array, attempt: number): string {
  const [a, b] = [words[0]!, words[1]!];
  const narrow = attempt < NARROW_ATTEMPTS;
  const hex = (n: number, digits: number) => n.toString(16).padStart(8, "0").slice(0, digits);
  switch (seed.type) {
    case "phone":
      return `+1 999 555 ${narrow ? `01${String(a % 100).padStart(2, "0")}` : String(a % 10000).padStart(4, "0")}`;
    case "ip":
      if (ipVersion(seed.value) === 4 && narrow) return `${DOC_V4[Math.floor((a % 762) / 254)]}${((a % 762) % 254) + 1}`;
      return `2001:db8::${hex(a, 4)}:${hex(b, 4)}`;
    case "account":
      return `ACCT-${String(a % 100_000_000).padStart(8, "0")}`;
    case "machine":
      return `host-${hex(a, 6)}.alias`;
    case "log":
      return `log-${hex(a, 8)}`;
    default:
      return `REF-${narrow ? String(a % 10_000).padStart(4, "0") : String(a % 100_000_000).padStart(8, "0")}`;
  }
}

/**
 * Which private email domains stay real: a free-mail domain, or (with
 * public_layer_wins) a public seed's domain — a public domain, a public email's
 * domain, or a domain whose first label is a public company's name (`acme.com` for Acme Corp).
 */
export function domainKeeper(seeds: readonly Seed[], options: DeriveOptions): (domain: string) => boolean {
  const domains = new Set<string>();
  const labels = new Set<string>();
  for (const seed of seeds) {
    if (seed.role !== "public") continue;
    if (seed.type === "domain") domains.add(seed.value);
    if (seed.type === "email") domains.add(seed.value.split("@")[1]!);
    if (seed.type === "company") labels.add(slug(companyParts(seed.value).base)).add(asciiWord(companyParts(seed.value).base));
  }
  return (domain) =>
    options.publicMailboxDomains.has(domain) || (options.publicLayerWins && (domains.has(domain) || labels.has(domain.split(".")[0]!)));
}

/**
 * One persona per identity key, in order of first appearance. Attempt 0 for all
 * at once; a persona whose label another identity already holds, or that `refused`
 * (a real word reused, a compound word), is drawn again with the next attempt.
 */
async function personas<P extends { attempt: number }>(
  seeds: readonly { identityKey: string }[],
  draw: (key: string, attempt: number) => Promise<P>,
  label: (persona: P) => string,
  refused: (persona: P) => boolean,
): Promise<Map<string, P>> {
  const keys = [...new Set(seeds.map((seed) => seed.identityKey))];
  const first = await Promise.all(keys.map((key) => draw(key, 0)));
  const chosen = new Map<string, P>();
  const labels = new Set<string>();
  for (const [index, key] of keys.entries()) {
    let persona: P = first[index]!;
    while (labels.has(fold(label(persona))) || refused(persona)) {
      if (persona.attempt + 1 === MAX_ATTEMPTS)
        throw new AliasError("rules_alias_bad_seed", `no free persona for identity ${index} after ${MAX_ATTEMPTS} attempts`);
      persona = await draw(key, persona.attempt + 1);
    }
    labels.add(fold(label(persona)));
    chosen.set(key, persona);
  }
  return chosen;
}
