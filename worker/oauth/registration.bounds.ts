/**
 * Bounds on RFC 7591 client metadata. `/oauth/register` needs no credential,
 * and every field a client sends is stored for as long as the client lives
 * and shown on the consent page, so each has a size. Types and URL schemes are
 * the authorization library's to check; these are the sizes it does not.
 */
export const REGISTRATION_BOUNDS = {
  /** The whole registration request, in bytes. */
  bodyBytes: 16 * 1024,
  /** Members of the metadata object (localized `client_name#fr` and the like count one each). */
  members: 32,
  clientNameChars: 200,
  redirectUris: 10,
  /** Every URI: redirect URIs, `client_uri`, `logo_uri`, `tos_uri`, `policy_uri`, `jwks_uri`. */
  uriChars: 2000,
  contacts: 10,
  contactChars: 320,
  /** Entries of `grant_types` and of `response_types`. */
  listEntries: 10,
  /** Every other string: an entry of those lists, `token_endpoint_auth_method`, `software_id`, `software_version`, a language tag. */
  shortChars: 200,
  scopeChars: 1000,
  /** `software_statement` (a JWT) and `jwks` (as JSON), in characters. */
  documentChars: 8192,
} as const;

/** Why a registration is refused, as RFC 7591 §3.2.2 answers it. */
export interface MetadataRefusal {
  error: "invalid_client_metadata" | "invalid_redirect_uri";
  description: string;
}

const URI_FIELDS = ["client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri"] as const;
const SHORT_FIELDS = ["token_endpoint_auth_method", "software_id", "software_version"] as const;
/** The fields RFC 7591 §2.2 lets a client localize as `name#language-tag`, with the bound of each. */
const LOCALIZABLE = new Map<string, number>([
  ["client_name", REGISTRATION_BOUNDS.clientNameChars],
  ...URI_FIELDS.filter((field) => field !== "jwks_uri").map((field): [string, number] => [field, REGISTRATION_BOUNDS.uriChars]),
]);

const metadataRefusal = (description: string): MetadataRefusal => ({ error: "invalid_client_metadata", description });

/** The first bound the metadata breaks, or null. Values of the wrong type pass here: the library refuses them. */
export function metadataBreach(metadata: Record<string, unknown>): MetadataRefusal | null {
  const names = Object.keys(metadata);
  const B = REGISTRATION_BOUNDS;
  if (names.length > B.members) return metadataRefusal(`The metadata has ${names.length} members; at most ${B.members}`);

  const redirects = metadata.redirect_uris;
  if (Array.isArray(redirects)) {
    if (redirects.length > B.redirectUris) {
      return { error: "invalid_redirect_uri", description: `redirect_uris has ${redirects.length} entries; at most ${B.redirectUris}` };
    }
    if (redirects.some((uri) => typeof uri === "string" && uri.length > B.uriChars)) {
      return { error: "invalid_redirect_uri", description: `A redirect URI is longer than ${B.uriChars} characters` };
    }
  }
  const tooLong = (field: string, max: number) => {
    const value = metadata[field];
    return typeof value === "string" && value.length > max ? metadataRefusal(`${field} is longer than ${max} characters`) : null;
  };
  for (const field of URI_FIELDS) {
    const refusal = tooLong(field, B.uriChars);
    if (refusal) return refusal;
  }
  for (const field of SHORT_FIELDS) {
    const refusal = tooLong(field, B.shortChars);
    if (refusal) return refusal;
  }
  const fixed =
    tooLong("client_name", B.clientNameChars) ?? tooLong("scope", B.scopeChars) ?? tooLong("software_statement", B.documentChars);
  if (fixed) return fixed;
  if (metadata.jwks !== undefined && JSON.stringify(metadata.jwks).length > B.documentChars) {
    return metadataRefusal(`jwks is longer than ${B.documentChars} characters as JSON`);
  }

  const lists: [string, number, number][] = [
    ["contacts", B.contacts, B.contactChars],
    ["grant_types", B.listEntries, B.shortChars],
    ["response_types", B.listEntries, B.shortChars],
  ];
  for (const [field, entries, chars] of lists) {
    const list = metadata[field];
    if (!Array.isArray(list)) continue;
    if (list.length > entries) return metadataRefusal(`${field} has ${list.length} entries; at most ${entries}`);
    if (list.some((entry) => typeof entry === "string" && entry.length > chars)) {
      return metadataRefusal(`An entry of ${field} is longer than ${chars} characters`);
    }
  }

  for (const name of names) {
    const hash = name.indexOf("#");
    const max = hash > 0 ? LOCALIZABLE.get(name.slice(0, hash)) : undefined;
    if (max === undefined) continue;
    if (name.length - hash - 1 > B.shortChars) return metadataRefusal(`The language tag of ${name.slice(0, hash)} is too long`);
    const refusal = tooLong(name, max);
    if (refusal) return refusal;
  }
  return null;
}
