// The floor for one Worker hop: passes each request's bytes to the upstream and
// the response back, untouched. Each part of `npm run bench` runs it exactly as it
// runs the gateway (the gateway part under Miniflare, bench/miniflare-host.ts; the
// proxy part under wrangler dev), so the difference between them is the gateway's own cost.
//
// Under `/with-do/…` it first makes one Durable Object read, as the gateway does
// before dispatching a hooked call (the re-read of the active revision). That
// gives the floor for a hooked call: a Worker hop plus one Durable Object round trip.
import { DurableObject } from "cloudflare:workers";

interface ForwarderEnv {
  UPSTREAM_ORIGIN: string;
  POINTERS: DurableObjectNamespace<PointerStore>;
}

/** A SQLite-backed object holding one small row, like a tool's deployment pointers. */
export class PointerStore extends DurableObject<ForwarderEnv> {
  constructor(ctx: DurableObjectState, env: ForwarderEnv) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS pointers (tool TEXT PRIMARY KEY, active TEXT)");
    ctx.storage.sql.exec("INSERT OR IGNORE INTO pointers VALUES ('bench', 'rev_bench')");
  }

  read(tool: string): string | null {
    return this.ctx.storage.sql.exec<{ active: string }>("SELECT active FROM pointers WHERE tool = ?", tool).toArray()[0]?.active ?? null;
  }
}

const WITH_DO = "/with-do";

export default {
  async fetch(request: Request, env: ForwarderEnv): Promise<Response> {
    const url = new URL(request.url);
    let path = url.pathname;
    if (path.startsWith(`${WITH_DO}/`)) {
      if ((await env.POINTERS.getByName("bench").read("bench")) === null) return new Response("pointer missing", { status: 500 });
      path = path.slice(WITH_DO.length);
    }
    return fetch(`${env.UPSTREAM_ORIGIN}${path}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    });
  },
};
