import { canonicalJson, sha256Hex } from "../../lib/crypto.ts";
import type { JsonObject } from "./lifecycle.types.ts";

const encoder = new TextEncoder();
export const utf8Bytes = (text: string) => encoder.encode(text).byteLength;

/**
 * The identity of a hook's content: source and config, with config keys in
 * canonical order. Identical saves, test records and revisions are matched on it.
 */
export const contentHash = (source: string, config: JsonObject) => sha256Hex(canonicalJson({ source, config }));

/** What one version costs against the workspace's history allowance. */
export const versionBytes = (source: string, config: JsonObject, note: string | null) =>
  utf8Bytes(source) + utf8Bytes(JSON.stringify(config)) + (note ? utf8Bytes(note) : 0);

/** The draft's etag is its version id: it changes exactly when a new version is written. */
const EMPTY_DRAFT_ETAG = '"empty"';
export const etagOf = (versionId: string | null) => (versionId ? `"${versionId}"` : EMPTY_DRAFT_ETAG);

/** Strong comparison, tolerant of a client that drops the quotes. */
export function etagMatches(ifMatch: string, current: string): boolean {
  const presented = ifMatch.trim();
  return presented === current || `"${presented}"` === current;
}
