// `{field}` holes in a declared tool's url, query, body and limit, filled from the
// call's input. A hole in a URL is percent-encoded, so it can never change the
// scheme, host or path the template fixes; a `{url}`-only template takes a whole
// URL and only an http or https one.
import type { ToolInput } from "../events.ts";
import { LiveToolError } from "./errors.ts";

const HOLE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const ONE_HOLE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** The fields a template string names. */
export function holesOf(text: string): string[] {
  return [...text.matchAll(HOLE)].map((match) => match[1]!);
}

/** Every hole in a JSON template (strings anywhere in it, keys excepted). */
export function holesIn(template: unknown): string[] {
  if (typeof template === "string") return holesOf(template);
  if (Array.isArray(template)) return template.flatMap(holesIn);
  if (template !== null && typeof template === "object") return Object.values(template).flatMap(holesIn);
  return [];
}

/** The field a string consists of, when it is exactly one hole. */
export const soleHole = (text: string): string | undefined => ONE_HOLE.exec(text.trim())?.[1];

const scalarText = (value: unknown): string =>
  value === undefined || value === null
    ? ""
    : typeof value === "string"
      ? value
      : typeof value === "object"
        ? JSON.stringify(value)
        : String(value);

/** Fills a string's holes as text (absent fields are empty). */
export function fillText(text: string, input: ToolInput, encode: (text: string) => string = (text) => text): string {
  return text.replace(HOLE, (_, field: string) => encode(scalarText(input[field])));
}

/**
 * A JSON (or string) body: a string that is exactly one hole becomes the field's typed value, and
 * an absent optional field drops its key (or its list item); other strings are filled as text.
 */
export function fillJson(template: unknown, input: ToolInput): unknown {
  if (typeof template === "string") {
    const field = soleHole(template);
    return field === undefined ? fillText(template, input) : input[field];
  }
  if (Array.isArray(template)) return template.map((item) => fillJson(item, input)).filter((item) => item !== undefined);
  if (template !== null && typeof template === "object") {
    const filled: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(template)) {
      const item = fillJson(value, input);
      if (item !== undefined) filled[key] = item;
    }
    return filled;
  }
  return template;
}

/** Query parameters from a template table; a parameter that is exactly one absent hole is dropped. */
export function fillQuery(query: Readonly<Record<string, string>>, input: ToolInput): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, template] of Object.entries(query)) {
    const field = soleHole(template);
    if (field !== undefined && input[field] === undefined) continue;
    pairs.push([name, fillText(template, input)]);
  }
  return pairs;
}

/** `limit`: a number, or a template that fills to a non-negative integer; absent is no limit. */
export function fillLimit(tool: string, limit: number | string | undefined, input: ToolInput): number | undefined {
  if (limit === undefined || typeof limit === "number") return limit;
  const field = soleHole(limit);
  const value = field === undefined ? Number(fillText(limit, input)) : input[field];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
    throw new LiveToolError("live_input_invalid", `${tool}: limit ${limit} must be a whole number ≥ 0, not ${JSON.stringify(value)}`);
  return value;
}

const WEB_SCHEMES = new Set(["http:", "https:"]);

/** What a URL template fixes before its first hole: its origin, when the scheme and host come before any hole. */
export interface UrlTemplate {
  text: string;
  /** `{url}` alone: the field is the whole URL. */
  whole?: string;
  fixedOrigin?: string;
  /** Where the path ends (the first `?` or `#`), to tell path holes from query holes. */
  pathEnd: number;
  /** The text cut at its holes once, when the file loads, so a call fills it without a regular expression. */
  parts: UrlPart[];
}

/**
 * Literal text; a hole (`path`: before pathEnd, where `.` and `..` are refused); or a query parameter that is
 * exactly one hole (`&n={max_results}`), dropped whole when its field is absent.
 */
type UrlPart = string | { field: string; path: boolean } | { field: string; separator: string; name: string };

const ABSENT_PAIR = /([?&])([^=&#]+)=\{([A-Za-z_][A-Za-z0-9_]*)\}(?=&|#|$)/g;

function urlParts(text: string, pathEnd: number): UrlPart[] {
  const parts: UrlPart[] = [];
  const holes = (from: number, to: number) => {
    let at = from;
    for (const match of text.slice(from, to).matchAll(HOLE)) {
      const start = from + match.index;
      if (start > at) parts.push(text.slice(at, start));
      parts.push({ field: match[1]!, path: start < pathEnd });
      at = start + match[0].length;
    }
    if (to > at) parts.push(text.slice(at, to));
  };
  let at = 0;
  for (const pair of text.matchAll(ABSENT_PAIR)) {
    if (pair.index < pathEnd) continue;
    holes(at, pair.index);
    parts.push({ separator: pair[1]!, name: pair[2]!, field: pair[3]! });
    at = pair.index + pair[0].length;
  }
  holes(at, text.length);
  return parts;
}

export function urlTemplate(text: string): UrlTemplate {
  const whole = soleHole(text);
  const first = text.search(HOLE);
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(text)?.[0];
  let fixedOrigin: string | undefined;
  // The authority is fixed when it ends before the first hole (a hole right after it would extend the host).
  if (authority && (first === -1 || first > authority.length)) {
    try {
      fixedOrigin = new URL(authority).origin;
    } catch {
      fixedOrigin = undefined;
    }
  }
  const found = text.search(/[?#]/);
  const pathEnd = found === -1 ? text.length : found;
  return { text, whole, fixedOrigin, pathEnd, parts: urlParts(text, pathEnd) };
}

/** The URL a call goes to: holes filled (percent-encoded), then checked against what the template fixes. */
export function fillUrl(tool: string, template: UrlTemplate, input: ToolInput, query: [string, string][] = []): URL {
  const refuse = (why: string) => new LiveToolError("live_url_refused", `${tool}: ${why}`);
  let text: string;
  if (template.whole !== undefined) {
    const value = input[template.whole];
    if (typeof value !== "string") throw refuse(`{${template.whole}} must be a URL string`);
    text = value.trim();
  } else {
    text = fillTemplateUrl(tool, template, input);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse(`${JSON.stringify(text.slice(0, 200))} is not a URL`);
  }
  if (!WEB_SCHEMES.has(url.protocol)) throw refuse(`only http and https URLs are fetched, not ${url.protocol}`);
  if (template.fixedOrigin !== undefined && url.origin !== template.fixedOrigin)
    throw refuse(`the input would change the template's origin ${template.fixedOrigin} to ${url.origin}`);
  for (const [name, value] of query) url.searchParams.append(name, value);
  return url;
}

function fillTemplateUrl(tool: string, template: UrlTemplate, input: ToolInput): string {
  let text = "";
  for (const part of template.parts) {
    if (typeof part === "string") text += part;
    else if ("separator" in part) {
      // A query parameter that is exactly one absent hole (`&n={max_results}`) is dropped, like a body key.
      const value = input[part.field];
      if (value === undefined) text += part.separator === "?" ? "?" : "";
      else {
        const name = part.name.includes("{") ? fillText(part.name, input, encodeURIComponent) : part.name;
        text += `${part.separator}${name}=${encodeURIComponent(scalarText(value))}`;
      }
    } else {
      const value = scalarText(input[part.field]);
      if (part.path && (value === "." || value === ".."))
        throw new LiveToolError(
          "live_url_refused",
          `${tool}: {${part.field}} = ${JSON.stringify(value)} would move up the template's path`,
        );
      text += encodeURIComponent(value);
    }
  }
  return text;
}
