/**
 * Issue 26, finding 3: with only the console's cookie, no body, no content type and a foreign `Origin` (another
 * port on the same host is same-site, so `SameSite=Strict` does not stop it), `POST …/approvals/{id}/approve`
 * approved the call and `POST …/services/{id}/refresh` ran; `/dev/login` took a cross-origin `text/plain` body and
 * the OAuth consent POST never looked at `Origin`. Now every state-changing request authenticated by a cookie needs
 * `Sec-Fetch-Site: same-origin` or an `Origin` equal to the console's own, else 403 `csrf_refused`.
 */
import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, connectMcp, demoGateway, devLogin, ORIGIN, upstreamReceived } from "../../test/helpers.ts";
import { createApp } from "../app.ts";
import { authorizationRequest, registerClient, signInAdmin } from "../oauth/oauth.fixtures.ts";
import { COOKIE_FREE_PATHS } from "./csrf.ts";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Every state-changing route the app serves, read from its router (the OpenAPI routes, the OAuth and dev-login
 * routes, `/mcp`): a route added later is in this list without anyone adding it here. `ALL` routes are asked with
 * POST; middleware (paths with `*`) is not a route.
 */
function stateChangingRoutes(): { method: string; path: string }[] {
  const seen = new Set<string>();
  const routes: { method: string; path: string }[] = [];
  for (const route of createApp().routes) {
    if (route.path.includes("*")) continue;
    const method = route.method === "ALL" ? "POST" : route.method;
    if (!STATE_CHANGING.has(method)) continue;
    const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => `${name}-1`);
    const key = `${method} ${path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    routes.push({ method, path });
  }
  return routes;
}

/** What a page of another origin makes a browser send: the cookie rides along (same-site), the headers tell. */
const FOREIGN = [
  ["no Origin, no Sec-Fetch-Site", {}],
  ["another port of the same host", { origin: "https://rayrun.test:8443", "sec-fetch-site": "same-site" }],
  ["another site", { origin: "https://attacker.example", "sec-fetch-site": "cross-site" }],
  ["an opaque origin", { origin: "null", "sec-fetch-site": "cross-site" }],
  ["Sec-Fetch-Site alone", { "sec-fetch-site": "same-site" }],
  ["a look-alike origin", { origin: "https://rayrun.test.attacker.example" }],
] as const;

const CSRF_REFUSED = {
  error: {
    code: "csrf_refused",
    message:
      "A request signed in with the console's session must come from the console itself (Sec-Fetch-Site: same-origin, or its own Origin)",
  },
};

const post = (path: string, headers: Record<string, string>, init: RequestInit = {}) =>
  SELF.fetch(`${ORIGIN}${path}`, { method: "POST", redirect: "manual", ...init, headers });

describe("finding 3: CSRF on cookie-authenticated routes", () => {
  it("refuses every state-changing route with csrf_refused when the cookie comes from another origin", async ({ expect }) => {
    const gateway = await demoGateway();
    const cookie = await signInAdmin(gateway, `csrf-${gateway.tag}@example.com`);
    const routes = stateChangingRoutes();
    // The ones the issue names are among them, and /mcp's and the OAuth library's endpoints, which read no cookie, are
    // the only ones left out (a new cookie-free endpoint must be added to COOKIE_FREE_PATHS on purpose).
    for (const named of ["POST /v1/workspaces/ws-1/approvals/id-1/approve", "POST /v1/workspaces/ws-1/services/svc-1/refresh"]) {
      expect(routes.map((route) => `${route.method} ${route.path}`)).toContain(named);
    }
    expect([...COOKIE_FREE_PATHS].sort()).toEqual(["/mcp", "/oauth/register", "/oauth/token"]);
    const guarded = routes.filter((route) => !COOKIE_FREE_PATHS.has(route.path));
    expect(guarded.length).toBeGreaterThan(25);
    expect(guarded.map((route) => route.path)).toEqual(expect.arrayContaining(["/dev/login", "/oauth/authorize"]));

    for (const { method, path } of guarded) {
      const concrete = path.replace("ws-1", gateway.ws);
      for (const [what, headers] of FOREIGN) {
        const res = await SELF.fetch(`${ORIGIN}${concrete}`, { method, redirect: "manual", headers: { ...headers, cookie } });
        expect([method, path, what, res.status, await res.json()]).toEqual([method, path, what, 403, CSRF_REFUSED]);
      }
      // The same request from the console itself is not refused as CSRF (whatever else it answers).
      for (const own of [{ "sec-fetch-site": "same-origin" }, { origin: ORIGIN }] as Record<string, string>[]) {
        const res = await SELF.fetch(`${ORIGIN}${concrete}`, { method, redirect: "manual", headers: { ...own, cookie } });
        expect([method, path, await res.text()]).not.toEqual([method, path, expect.stringContaining("csrf_refused")]);
      }
    }
  }, 120_000);

  it("a foreign page cannot approve a pending call with the admin's cookie: the approval stays pending and the call does not run", async ({
    expect,
  }) => {
    const gateway = await demoGateway();
    const policy = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "approval" },
    });
    expect(policy.status).toBe(200);
    const agent = await connectMcp(gateway.clientKey);
    const call = () => agent.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    const approvalId = ((await call())._meta as Record<string, any>)["dev.rayrun/error"].details.approvalId as string;
    const cookie = await signInAdmin(gateway, `csrf-${gateway.tag}@example.com`);

    const forged = await post(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, {
      cookie,
      origin: "https://rayrun.test:8443",
      "sec-fetch-site": "same-site",
    });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toEqual(CSRF_REFUSED);
    const stored = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}`, { key: gateway.adminKey });
    expect(stored.body.status).toBe("pending");
    expect(((await call())._meta as Record<string, any>)["dev.rayrun/error"].code).toBe("approval_required");
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);

    // The console itself approves with the same cookie.
    const approved = await post(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, {
      cookie,
      origin: ORIGIN,
      "sec-fetch-site": "same-origin",
    });
    expect(approved.status).toBe(200);
    expect((await call()).isError).toBeFalsy();
  });

  it("a foreign page cannot make the gateway re-index a service with the admin's cookie", async ({ expect }) => {
    const gateway = await demoGateway();
    const cookie = await signInAdmin(gateway, `csrf-${gateway.tag}@example.com`);
    const listings = async () => (await upstreamReceived(gateway.tag)).methods.filter((m) => m.method === "tools/list").length;
    const before = await listings();
    const forged = await post(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}/refresh`, {
      cookie,
      origin: "https://attacker.example",
    });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toEqual(CSRF_REFUSED);
    // Deployed, Cloudflare Access turns its cookie into this header: it is the session too.
    const viaAccess = await post(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}/refresh`, {
      "cf-access-jwt-assertion": "eyJhbGciOiJSUzI1NiJ9.e30.c2ln",
      origin: "https://attacker.example",
    });
    expect(viaAccess.status).toBe(403);
    expect(await viaAccess.json()).toEqual(CSRF_REFUSED);
    expect(await listings()).toBe(before);
  });

  it("/dev/login refuses a cross-origin text/plain body and sets no cookie; the console's own sign-in works", async ({ expect }) => {
    const gateway = await demoGateway();
    const email = `csrf-${gateway.tag}@example.com`;
    await signInAdmin(gateway, email);
    const forged = await post(
      "/dev/login",
      { origin: "https://attacker.example", "sec-fetch-site": "cross-site", "content-type": "text/plain" },
      { body: JSON.stringify({ email }) },
    );
    expect(forged.status).toBe(403);
    expect(await forged.json()).toEqual(CSRF_REFUSED);
    expect(forged.headers.get("set-cookie")).toBeNull();
    expect(await devLogin(email)).toMatch(/^rr_dev_session=/);
  });

  it("the OAuth consent POST refuses a foreign Origin: no grant, no redirect with a code", async ({ expect }) => {
    const gateway = await demoGateway();
    const cookie = await signInAdmin(gateway, `csrf-${gateway.tag}@example.com`);
    const { url } = await authorizationRequest(await registerClient());
    const page = await SELF.fetch(url, { headers: { cookie } });
    const handle = /name="handle" value="([^"]+)"/.exec(await page.text())![1]!;
    const consentCookies = page.headers.getSetCookie().map((set) => set.split(";")[0]);
    const forged = await post(
      new URL(url).pathname + new URL(url).search,
      {
        cookie: [cookie, ...consentCookies].join("; "),
        origin: "https://attacker.example",
        "content-type": "application/x-www-form-urlencoded",
      },
      { body: new URLSearchParams({ handle, target: `${gateway.ws} ${gateway.defaultProfileId}`, decision: "approve" }) },
    );
    expect(forged.status).toBe(403);
    expect(await forged.json()).toEqual(CSRF_REFUSED);
    expect(forged.headers.get("location")).toBeNull();
    expect((await api(`/v1/workspaces/${gateway.ws}/oauth/grants`, { key: gateway.adminKey })).body.grants).toEqual([]);
  });

  it("a request authenticated by an API key needs neither header, even with a cookie beside it", async ({ expect }) => {
    const gateway = await demoGateway();
    const cookie = await signInAdmin(gateway, `csrf-${gateway.tag}@example.com`);
    const res = await api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}/refresh`, {
      method: "POST",
      key: gateway.adminKey,
      headers: { cookie, origin: "https://attacker.example" },
    });
    expect(res.status).toBe(200);
  });

  it("a malformed Bearer header beside the cookie authenticates nothing: the cookie never stands in for it", async ({ expect }) => {
    // Round 6: `Authorization: Bearer a b` skipped the CSRF check (a bearer request) while authentication, finding no
    // single token in it, fell back to the cookie, so a foreign Origin renamed the workspace.
    const gateway = await demoGateway();
    const cookie = await signInAdmin(gateway, `csrf-${gateway.tag}@example.com`);
    for (const authorization of ["Bearer a b", "Bearer rr_x rr_y", "bearer \tnot-a-key more"]) {
      const res = await SELF.fetch(`${ORIGIN}/v1/workspaces/${gateway.ws}`, {
        method: "PATCH",
        headers: { cookie, authorization, origin: "https://rayrun.test:8443", "content-type": "application/json" },
        body: JSON.stringify({ name: "renamed from another origin" }),
      });
      expect([authorization, res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([
        authorization,
        401,
        "unauthorized",
      ]);
      const read = await SELF.fetch(`${ORIGIN}/v1/workspaces/${gateway.ws}`, { headers: { cookie, authorization } });
      expect([authorization, read.status]).toEqual([authorization, 401]);
    }
    const workspace = await api(`/v1/workspaces/${gateway.ws}`, { key: gateway.adminKey });
    expect(workspace.body.name).not.toBe("renamed from another origin");
    // The cookie alone, from the console, still works.
    const own = await SELF.fetch(`${ORIGIN}/v1/workspaces/${gateway.ws}`, { headers: { cookie } });
    expect(own.status).toBe(200);
  });
});
