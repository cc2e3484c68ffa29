// What a declared HTTP tool makes of a response: `json` (a JSONPath to the results and
// a field map), `regex` (one object per match of the author's pattern, tags stripped and
// entities decoded) or `text` (the page's readable text). Every pass is linear in the
// page: an outsider writes the page, only the pattern is the author's. The pattern is
// JavaScript's backtracking RegExp, which a page can hold for minutes: the Node SDK runs
// it on a thread of its own, stopped at the tool's timeout.
import { decodeHTML } from "entities";
import { valueAt } from "../matcher.ts";
import { LiveToolError } from "./errors.ts";
import { compileJsonPath } from "./jsonpath.ts";

/** Characters of a page one pattern runs over; the rest is not matched, and the call says it was cut. */
export const MAX_PATTERN_INPUT = 2 * 1024 * 1024;
/** Matches one pattern run collects, before `limit`. */
export const MAX_MATCHES = 10_000;

/** A result field: an item path (a group name for regex), or a redirect URL to unwrap. */
export type FieldSource = string | { from: string; query_param: string };
export type FieldMap = Record<string, FieldSource>;

export type ParseSpec =
  { mode: "json"; results?: string; fields?: FieldMap } | { mode: "regex"; pattern: RegExp; fields?: FieldMap } | { mode: "text" };

/** A response read up to max_bytes. */
export interface Page {
  url: string;
  status: number;
  contentType: string;
  body: string;
  truncated: boolean;
}

export interface TextPage {
  url: string;
  status: number;
  title: string;
  text: string;
  truncated: boolean;
}

/** The tool's result from a page, and whether it was read from a cut page. */
export function parsePage(tool: string, spec: ParseSpec, page: Page, limit: number | undefined): { result: unknown; truncated: boolean } {
  if (spec.mode === "text") return { result: textPage(page), truncated: page.truncated };
  if (spec.mode === "regex") {
    // On the caller's thread: the Node SDK runs the pattern off it instead (node/live/pattern-thread.ts).
    const run = patternRun(page, limit);
    return {
      result: matchedItems(patternMatches(spec.pattern, run.text, run.most), spec.fields, page.url),
      truncated: page.truncated || run.cut,
    };
  }
  if (page.truncated)
    throw new LiveToolError(
      "live_response_too_large",
      `${tool}: the JSON answer passed max_bytes and was cut; a cut JSON body cannot be read`,
    );
  let body: unknown;
  try {
    body = JSON.parse(page.body);
  } catch {
    throw new LiveToolError(
      "live_not_json",
      `${tool}: the answer is not JSON (${page.contentType || "no content type"}): ${page.body.slice(0, 120)}`,
    );
  }
  if (spec.results === undefined) return { result: body, truncated: false };
  const items = compileJsonPath(spec.results)(body);
  const cut = limit === undefined ? items : items.slice(0, limit);
  return { result: spec.fields ? cut.map((item) => pickFields(item, spec.fields!, page.url, jsonField)) : cut, truncated: false };
}

function jsonField(item: unknown, path: string): unknown {
  return path.startsWith("$") ? compileJsonPath(path)(item)[0] : valueAt(item, path);
}

/** The named groups of one match (a group that did not take part is undefined). */
export type MatchGroups = Record<string, string | undefined>;

/** What one pattern run reads of a page (its first MAX_PATTERN_INPUT characters) and how many matches it collects. */
export function patternRun(page: Page, limit: number | undefined): { text: string; most: number; cut: boolean } {
  const cut = page.body.length > MAX_PATTERN_INPUT;
  return { text: cut ? page.body.slice(0, MAX_PATTERN_INPUT) : page.body, most: Math.min(limit ?? MAX_MATCHES, MAX_MATCHES), cut };
}

/** The named groups of the first `most` matches. */
export function patternMatches(pattern: RegExp, text: string, most: number): MatchGroups[] {
  const found: MatchGroups[] = [];
  if (most === 0) return found;
  for (const match of text.matchAll(pattern)) {
    found.push({ ...match.groups });
    if (found.length >= most) break;
  }
  return found;
}

/** One result object per match: its groups as text, through the field map. */
export function matchedItems(found: MatchGroups[], fields: FieldMap | undefined, base: string): unknown[] {
  return found.map((match) => {
    const groups: Record<string, string> = {};
    for (const [name, value] of Object.entries(match)) if (value !== undefined) groups[name] = cleanFragment(value);
    return fields ? pickFields(groups, fields, base, (item, name) => (item as Record<string, string>)[name]) : groups;
  });
}

function pickFields(
  item: unknown,
  fields: FieldMap,
  base: string,
  read: (item: unknown, path: string) => unknown,
): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(fields)) {
    const value = typeof source === "string" ? read(item, source) : unwrapRedirect(read(item, source.from), source.query_param, base);
    // A field whose path or group found nothing is left out, not invented.
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

/** `//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com` → `https://example.com`; a URL without the parameter is kept. */
function unwrapRedirect(value: unknown, parameter: string, base: string): unknown {
  if (typeof value !== "string") return value;
  try {
    return new URL(value, base).searchParams.get(parameter) ?? value;
  } catch {
    return value;
  }
}

/** A captured fragment as text: tags stripped, entities decoded, whitespace collapsed. */
export function cleanFragment(html: string): string {
  return decodeHTML(stripTags(html)).replace(/\s+/g, " ").trim();
}

/** Removes tags in one pass; a tag left open at the end drops the rest (it is not text). */
export function stripTags(html: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const open = html.indexOf("<", at);
    if (open === -1) return out + html.slice(at);
    out += html.slice(at, open);
    if (!/[A-Za-z/!?]/.test(html[open + 1] ?? "")) {
      out += "<";
      at = open + 1;
      continue;
    }
    const close = html.indexOf(">", open + 1);
    if (close === -1) return out;
    at = close + 1;
  }
}

/** Elements whose content is never page text. */
const HIDDEN = new Set(["script", "style", "noscript", "template", "svg", "title"]);
/** Elements that break a line in the readable text. */
const BLOCKS = new Set(
  "address article aside blockquote br dd div dl dt figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table tr ul".split(
    " ",
  ),
);
const CELLS = new Set(["td", "th"]);

/** Source line breaks in HTML are spaces; only block elements break lines. */
const collapse = (text: string) => text.replace(/\s+/g, " ");

/** `parse = "text"`: `{ url, status, title, text, truncated }`, scripts and styles removed. */
export function textPage(page: Page): TextPage {
  const html = /html|xml/i.test(page.contentType) || /^\s*</.test(page.body.slice(0, 512));
  if (!html) return { url: page.url, status: page.status, title: "", text: page.body, truncated: page.truncated };
  const { title, text } = readableText(page.body);
  return { url: page.url, status: page.status, title, text, truncated: page.truncated };
}

function readableText(html: string): { title: string; text: string } {
  const parts: string[] = [];
  let title = "";
  let at = 0;
  while (at < html.length) {
    const open = html.indexOf("<", at);
    if (open === -1) {
      parts.push(collapse(html.slice(at)));
      break;
    }
    parts.push(collapse(html.slice(at, open)));
    if (html.startsWith("<!--", open)) {
      const end = html.indexOf("-->", open + 4);
      at = end === -1 ? html.length : end + 3;
      continue;
    }
    if (html[open + 1] === "!" || html[open + 1] === "?") {
      // <!doctype …>, <![CDATA[…]]>, <?xml …?>: markup, not text.
      const end = html.indexOf(">", open + 2);
      at = end === -1 ? html.length : end + 1;
      continue;
    }
    // Tell a tag from a lone `<` before looking for its `>`: a page of `< < < …` would otherwise scan to the end
    // once per `<` (quadratic; a 1 MB page held the thread 13 s).
    const tag = /^(\/?)\s*([A-Za-z][A-Za-z0-9-]*)/.exec(html.slice(open + 1, open + 65));
    if (!tag) {
      parts.push("<");
      at = open + 1;
      continue;
    }
    const close = html.indexOf(">", open + 1);
    if (close === -1) break;
    const [, closing, rawName] = tag;
    const name = rawName!.toLowerCase();
    at = close + 1;
    if (!closing && HIDDEN.has(name)) {
      // Skip to its end tag (a search for a literal: linear); unclosed, the rest is hidden too.
      const endTag = new RegExp(`</${name}\\s*>`, "gi");
      endTag.lastIndex = at;
      const end = endTag.exec(html);
      if (name === "title" && title === "") title = cleanFragment(html.slice(at, end ? end.index : html.length));
      at = end ? endTag.lastIndex : html.length;
      continue;
    }
    if (BLOCKS.has(name)) parts.push("\n");
    else if (CELLS.has(name)) parts.push(" ");
  }
  const text = decodeHTML(parts.join(""))
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { title, text };
}
