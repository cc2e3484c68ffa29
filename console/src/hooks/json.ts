// Client-side checks of the JSON a user types, matching the API's own bounds so
// most mistakes are caught before a request (the API still checks, and its
// refusal is shown too).

/** The API's bound on a hook config: a JSON object, at most 16 KiB as compact JSON (UTF-8). */
export const CONFIG_MAX_BYTES = 16 * 1024;

export type JsonObject = Record<string, unknown>;
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export function parseJson(text: string, what: string): Checked<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `${what} is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

export function parseJsonObject(text: string, what: string): Checked<JsonObject> {
  const parsed = parseJson(text, what);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      message: `${what} must be a JSON object ({ … }), not ${Array.isArray(value) ? "an array" : String(value === null ? "null" : typeof value)}`,
    };
  }
  return { ok: true, value: value as JsonObject };
}

export function checkConfig(text: string): Checked<JsonObject> {
  const parsed = parseJsonObject(text.trim() === "" ? "{}" : text, "The config");
  if (!parsed.ok) return parsed;
  const bytes = new TextEncoder().encode(JSON.stringify(parsed.value)).length;
  if (bytes > CONFIG_MAX_BYTES) {
    return { ok: false, message: `The config is ${bytes} bytes as JSON; the limit is ${CONFIG_MAX_BYTES} bytes (16 KiB)` };
  }
  return parsed;
}

export const pretty = (value: unknown): string => JSON.stringify(value, null, 2);
