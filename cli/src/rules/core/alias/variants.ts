// Every spelling of a real value paired with the same spelling of its alias, so a
// match of one becomes the other (docs/alias.md, "Variants").
import { asciiWord, companyParts, slug, type Derived } from "./derive.ts";

/** One spelling: `to` as written into the other side, `pretty` where the found text had separators (phones). */
export interface Spelling {
  form: string;
  real: string;
  alias: string;
  realPretty?: string;
  aliasPretty?: string;
}

export function spellings(derived: Derived, aliasDomainOf: (domain: string) => string | undefined): Spelling[] {
  const { seed, alias } = derived;
  const out: Spelling[] = [{ form: "value", real: seed.value, alias }];
  const add = (form: string, real: string, aliasText: string) => {
    if (real.length >= 2 && aliasText.length >= 2) out.push({ form, real, alias: aliasText });
  };
  switch (seed.type) {
    case "person_name": {
      const { real, alias: fake } = derived.name!;
      for (const [form, spell] of Object.entries(NAME_FORMS)) add(form, spell(real), spell(fake));
      // A real compound surname (`Smith-Jones`) is still that person in part: each part, alone and after the
      // given name, becomes the alias surname (minted surnames are never compound, so the way back is whole).
      const parts = real.surname.split("-");
      if (parts.length > 1)
        for (const part of parts) {
          add("surname_part", part, fake.surname);
          add("full_part", `${real.given} ${part}`, `${fake.given} ${fake.surname}`);
        }
      break;
    }
    case "email": {
      const [realLocal, realDomain] = seed.value.split("@") as [string, string];
      const [aliasLocal, aliasDomain] = alias.split("@") as [string, string];
      if (realLocal.length >= 4) add("local", realLocal, aliasLocal);
      // The persona's derived variants reach its domain, unless the domain stays real.
      if (aliasDomain !== realDomain && aliasDomainOf(realDomain) === aliasDomain) add("domain", realDomain, aliasDomain);
      break;
    }
    case "username":
      add("handle", `@${seed.value}`, `@${alias}`);
      break;
    case "company": {
      const real = companyParts(seed.value);
      const fake = companyParts(alias);
      if (real.suffix) add("base", real.base, fake.base);
      add("slug", slug(seed.value), slug(alias));
      add("slug_base", slug(real.base), slug(fake.base));
      add("word", asciiWord(real.base), asciiWord(fake.base));
      break;
    }
    case "phone":
      return phoneSpellings(seed.value, alias);
  }
  return out;
}

type Parts = { given: string; surname: string };
const NAME_FORMS: Record<string, (parts: Parts) => string> = {
  full: ({ given, surname }) => `${given} ${surname}`,
  surname_given: ({ given, surname }) => `${surname}, ${given}`,
  surname: ({ surname }) => surname,
  given: ({ given }) => given,
  initial_surname: ({ given, surname }) => `${given[0]}. ${surname}`,
  initial_space_surname: ({ given, surname }) => `${given[0]} ${surname}`,
  initials: ({ given, surname }) => `${given[0]}.${surname[0]}.`,
  handle: ({ given, surname }) => `${asciiWord(given).slice(0, 1)}${asciiWord(surname)}`,
  slug_dot: ({ given, surname }) => `${slug(given)}.${slug(surname)}`,
  slug_dash: ({ given, surname }) => `${slug(given)}-${slug(surname)}`,
  slug_underscore: ({ given, surname }) => `${slug(given)}_${slug(surname)}`,
  concat: ({ given, surname }) => `${asciiWord(given)}${asciiWord(surname)}`,
};

interface PhoneForms {
  e164?: string;
  digits: string;
  intl00?: string;
  trunk?: string;
  national?: string;
  pretty: string;
}

/** `+44 20 7946 0958`: the country code is the first group after `+`; `+1…` of 11 digits is NANP. */
export function phoneForms(value: string): PhoneForms {
  const digits = value.replace(/\D/g, "");
  const plus = value.startsWith("+");
  const firstGroup = /^\+(\d{1,3})[\s.\-/(]/.exec(value)?.[1];
  const cc = firstGroup ?? (plus && digits.length === 11 && digits.startsWith("1") ? "1" : undefined);
  if (!plus || cc === undefined) return { digits, pretty: value };
  const nsn = digits.slice(cc.length);
  return {
    e164: `+${digits}`,
    digits,
    intl00: `00${digits}`,
    ...(cc === "1" ? { national: nsn } : { trunk: `+${cc}0${nsn}`, national: `0${nsn}` }),
    pretty: value,
  };
}

function phoneSpellings(real: string, alias: string): Spelling[] {
  const r = phoneForms(real);
  const a = phoneForms(alias);
  const aliasNational = a.national!;
  // The alias is NANP (+1 999 555 …); a real form it lacks maps to its nearest one.
  const pairs: [string, string | undefined, string][] = [
    ["e164", r.e164, a.e164!],
    ["digits", r.digits, a.digits],
    ["intl00", r.intl00, a.intl00!],
    ["trunk", r.trunk, a.e164!],
    ["national", r.national, aliasNational],
  ];
  // Written without separators a phone is its E.164 form (or its digits when the seed had no country code).
  const out: Spelling[] = [{ form: "value", real: r.e164 ?? r.digits, alias: a.e164!, realPretty: real, aliasPretty: alias }];
  for (const [form, realForm, aliasForm] of pairs) {
    if (realForm === undefined) continue;
    out.push({
      form,
      real: realForm,
      alias: aliasForm,
      realPretty: form === "national" ? realForm : real,
      aliasPretty: form === "national" ? `${aliasNational.slice(0, 3)} ${aliasNational.slice(3, 6)} ${aliasNational.slice(6)}` : alias,
    });
  }
  return out;
}

/** `sha256:<hex of SHA-256("<slug>:<value>")>`, the form a world stores a field in. */
export async function storedForm(worldSlug: string, value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${worldSlug}:${value}`));
  return `sha256:${[...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}
