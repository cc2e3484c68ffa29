// A local HTTP server standing in for the web and the APIs declared live tools call
// (the network is closed in tests): saved pages from fixtures/live/, plus routes for
// status codes, redirects, non-JSON bodies, a page too large and a server that never answers.
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export const EXA_KEY = "exa-test-key-5f2b9c41";
const fixtures = join(import.meta.dirname, "fixtures/live");
const page = (name: string) => readFileSync(join(fixtures, name), "utf8");

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FixtureServer {
  origin: string;
  seen: Seen[];
  close(): Promise<void>;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const seen: Seen[] = [];
  let counter = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const url = new URL(req.url ?? "/", "http://fixture.test");
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      const html = (text: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(text);
      switch (url.pathname) {
        case "/html/":
          return html(page(url.searchParams.get("q") === "zzqxjv-nothing" ? "duckduckgo-no-results.html" : "duckduckgo-results.html"));
        case "/search":
        case "/findSimilar":
          if (req.headers["x-api-key"] !== EXA_KEY) return json(401, { error: "invalid x-api-key" });
          return res.writeHead(200, { "content-type": "application/json" }).end(page("exa-search.json"));
        case "/article":
          return html(page("article.html"));
        case "/big":
          return html(`<html><head><title>Big</title></head><body>${"<p>lorem ipsum dolor sit amet</p>\n".repeat(20_000)}</body></html>`);
        case "/items":
          return json(200, {
            total: 4,
            items: [1, 2, 3, 4].map((n) => ({
              id: n,
              name: `item ${n}`,
              meta: { link: `https://items.example/${n}`, go: `/out?to=https%3A%2F%2Fitems.example%2F${n}` },
            })),
          });
        case "/status/404":
          return json(404, { error: "no such record" });
        case "/status/500":
          return res.writeHead(500, { "content-type": "text/plain" }).end("upstream exploded");
        case "/lone-brackets":
          // 2 MB of `<` that open no tag, and of `</` that close none: markup a reader must pass in one scan.
          return html(`<html><body>${"< ".repeat(500_000)}${"</ ".repeat(333_000)}<p>end</p></body></html>`);
        case "/result-links":
          // 64 KiB of result links with no snippet after them: the DuckDuckGo example's pattern searches the rest of
          // the page from each one, and backtracks over every closing tag on the way (minutes, on JavaScript's RegExp).
          return html('<a class="result__a" href="x">t</a>'.repeat(1_900));
        case "/not-json":
          return html("<html><body>this is not JSON</body></html>");
        case "/hang":
          return; // never answers
        case "/counter":
          return json(200, { n: ++counter });
        case "/redirect": {
          // `to` (default /echo/landed) after `hops` more redirects to itself, with `status` (default 302).
          const hops = Number(url.searchParams.get("hops") ?? 0);
          const status = Number(url.searchParams.get("status") ?? 302);
          const next = new URL(url);
          next.searchParams.set("hops", String(hops - 1));
          const location = hops > 0 ? `${next.pathname}${next.search}` : (url.searchParams.get("to") ?? "/echo/landed");
          return res.writeHead(status, { location }).end();
        }
        default:
          if (url.pathname.startsWith("/echo"))
            return json(200, {
              method: req.method,
              path: url.pathname,
              query: Object.fromEntries(url.searchParams),
              rawQuery: url.search,
              headers: req.headers,
              body: body === "" ? null : body,
            });
          return json(404, { error: "no route" });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
