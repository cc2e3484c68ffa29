// Every relative link and #anchor in the project's Markdown resolves, so moving a section from one page to
// another cannot silently break the pages that point at it. Anchors are computed the way GitHub renders
// headings (github-slugger), from the heading's text as marked parses it.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import GithubSlugger from "github-slugger";
import { Lexer, type Token, type Tokens } from "marked";
import { describe, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

/** The pages a reader navigates: the front page, the reference in docs/, and the pages they link into. */
const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  "cli/README.md",
  "schema/STORAGE.md",
];

interface Link {
  page: string;
  href: string;
}

/** The plain text of inline tokens: what a heading renders as, so what GitHub slugs. */
function plainText(tokens: Token[] | undefined, fallback: string): string {
  if (!tokens) return fallback;
  return tokens
    .map((token) => ("tokens" in token && token.tokens ? plainText(token.tokens, "") : "text" in token ? token.text : ""))
    .join("");
}

/** Every token below `tokens`, tables and lists included. */
function* walk(tokens: Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    if ("tokens" in token && token.tokens) yield* walk(token.tokens);
    if (token.type === "list") for (const item of (token as Tokens.List).items) yield* walk([item]);
    if (token.type === "table") {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) yield* walk(cell.tokens);
    }
  }
}

function parse(page: string): { anchors: Set<string>; links: Link[] } {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const links: Link[] = [];
  for (const token of walk(Lexer.lex(readFileSync(join(root, page), "utf8")))) {
    if (token.type === "heading") anchors.add(slugger.slug(plainText((token as Tokens.Heading).tokens, token.text)));
    if (token.type === "link" || token.type === "image") links.push({ page, href: (token as Tokens.Link).href });
    if (token.type === "html") {
      for (const [, href = ""] of token.raw.matchAll(/\b(?:href|src)="([^"]+)"/g)) links.push({ page, href });
      for (const [, id = ""] of token.raw.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(id);
    }
  }
  return { anchors, links };
}

const parsed = new Map(pages.map((page) => [page, parse(page)]));

function anchorsOf(page: string): Set<string> {
  const known = parsed.get(page);
  if (known) return known.anchors;
  const fresh = parse(page);
  parsed.set(page, fresh);
  return fresh.anchors;
}

/** Why a link does not resolve, or null when it does. */
function brokenBecause({ page, href }: Link): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return null; // https:, mailto: and the like leave the repository
  const [pathPart, anchor] = href.split("#", 2) as [string, string | undefined];
  const target = pathPart === "" ? page : relative(root, resolve(root, dirname(page), decodeURI(pathPart)));
  if (target.startsWith("..")) return `${href} leaves the repository`;
  if (!existsSync(join(root, target))) return `${target} does not exist`;
  if (anchor === undefined) return null;
  if (!target.endsWith(".md") || statSync(join(root, target)).isDirectory()) return `#${anchor} on a file that is not Markdown`;
  return anchorsOf(target).has(decodeURIComponent(anchor)) ? null : `${target} has no heading #${anchor}`;
}

describe("Markdown links", () => {
  it("finds the pages and their links", ({ expect }) => {
    expect(pages).toContain("docs/errors.md");
    expect([...parsed.values()].reduce((sum, { links }) => sum + links.length, 0)).toBeGreaterThan(50);
  });

  it("resolves every relative link and #anchor in README.md, docs/*.md, cli/README.md and schema/STORAGE.md", ({ expect }) => {
    const broken = [...parsed.values()]
      .flatMap(({ links }) => links)
      .flatMap((link) => {
        const why = brokenBecause(link);
        return why ? [`${link.page}: (${link.href}) ${why}`] : [];
      });
    expect(broken).toEqual([]);
  });

  it("holds no merge conflict markers (Prettier turns them into quote and table lines, so it cannot catch them)", ({ expect }) => {
    const marked = pages.filter((page) => /^(<{7}|={7}|>{7})( |$)|^(> ){7}|^\| ={7} /m.test(readFileSync(join(root, page), "utf8")));
    expect(marked).toEqual([]);
  });

  it("reports a missing file, a missing heading and a link out of the repository", ({ expect }) => {
    expect(brokenBecause({ page: "README.md", href: "docs/nowhere.md" })).toBe("docs/nowhere.md does not exist");
    expect(brokenBecause({ page: "docs/limits.md", href: "errors.md#no-such-heading" })).toBe(
      "docs/errors.md has no heading #no-such-heading",
    );
    expect(brokenBecause({ page: "README.md", href: "../outside.md" })).toBe("../outside.md leaves the repository");
    expect(brokenBecause({ page: "README.md", href: "#no-such-section" })).toBe("README.md has no heading #no-such-section");
  });
});
