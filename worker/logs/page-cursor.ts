import { ApiError } from "../http/errors.ts";
import { base64Decode, base64UrlEncode, timingSafeEqual } from "../lib/crypto.ts";

/**
 * Page cursors of the logs API. A cursor names the workspace it was made for, the sequence it pages (`calls` or
 * `call_logs` rows, numbered within the workspace) and the last row's number, and is signed with a key derived from
 * SECRETS_KEY for this purpose only: opaque to clients, never forged, never read in another workspace (404) or
 * as a position in the other sequence (400).
 */
export type PagedRows = "calls" | "call_logs";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const keys = new Map<string, Promise<CryptoKey>>();
const INVALID = "not a cursor this API issued";
/** Longer than any cursor this module makes (a workspace id, a table name, a number and a signature). */
const MAX_CURSOR_CHARS = 512;

function signingKey(secretsKey: string): Promise<CryptoKey> {
  let key = keys.get(secretsKey);
  if (!key) {
    key = crypto.subtle
      .digest("SHA-256", encoder.encode(`rayrun-logs-cursor:${secretsKey}`))
      .then((material) => crypto.subtle.importKey("raw", material, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]));
    keys.set(secretsKey, key);
  }
  return key;
}

async function sign(payload: string, secretsKey: string): Promise<string> {
  return base64UrlEncode(new Uint8Array(await crypto.subtle.sign("HMAC", await signingKey(secretsKey), encoder.encode(payload))));
}

/** The cursor for the page after the row numbered `position`. */
export async function sealCursor(secretsKey: string, workspaceId: string, rows: PagedRows, position: number): Promise<string> {
  const payload = base64UrlEncode(encoder.encode(JSON.stringify([workspaceId, rows, position])));
  return `${payload}.${await sign(payload, secretsKey)}`;
}

/** The row number a cursor pages below; 400 `invalid_request` for one this API did not make, 404 for another workspace's. */
export async function openCursor(secretsKey: string, workspaceId: string, rows: PagedRows, cursor: string): Promise<number> {
  const [payload, signature, extra] = cursor.length <= MAX_CURSOR_CHARS ? cursor.split(".") : [];
  if (!payload || !signature || extra !== undefined || !timingSafeEqual(signature, await sign(payload, secretsKey))) throw invalidCursor();
  const [cursorWorkspace, cursorRows, position] = JSON.parse(decoder.decode(base64Decode(payload))) as [string, PagedRows, number];
  if (cursorWorkspace !== workspaceId) throw new ApiError("not_found", { message: "No such cursor in this workspace" });
  if (cursorRows !== rows) throw invalidCursor();
  return position;
}

const invalidCursor = () =>
  new ApiError("invalid_request", {
    message: `Invalid query.cursor: ${INVALID}`,
    details: { issues: [{ field: "query.cursor", message: INVALID }] },
  });
