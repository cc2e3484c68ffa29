/**
 * Issue 26, finding 6: `/oauth/register` needs no credential, and it stored a 900 KB `client_name` and 5,000
 * `redirect_uris`, took 30 parallel registrations in a second and kept every client for ever. Every field is
 * bounded now, one source registers at most 20 clients an hour, the deployment holds at most 10,000, and a client
 * no admin consented to within 24 h is deleted.
 */
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, it, vi } from "vitest";
import { api, createWorkspace, devLogin } from "../../test/helpers.ts";
import { authorizationRequest, exchange, newSource, REDIRECT_URI, registerClient, signInAdmin, tokenRequest } from "./oauth.fixtures.ts";
import { REGISTRATION_BOUNDS } from "./registration.bounds.ts";
import { REGISTRATION_LIMITS } from "./registry.do.ts";

const register = (metadata: Record<string, unknown>, source = newSource()) =>
  api("/oauth/register", { rawBody: JSON.stringify(metadata), headers: { "cf-connecting-ip": source } });

const valid = (extra: Record<string, unknown> = {}) => ({
  client_name: "Bounded connector",
  redirect_uris: [REDIRECT_URI],
  token_endpoint_auth_method: "none",
  ...extra,
});

/** The registrations the deployment's registry holds for a source (registry.do.ts). */
const rowsFrom = (source: string) =>
  runInDurableObject(env.OAUTH_REGISTRY.getByName("registrations"), (_instance, state) => {
    // The registry keeps an IPv6 source as its /64.
    const prefix = `${source.split(":").slice(0, 4).join(":")}::/64`;
    return state.storage.sql.exec("SELECT * FROM registrations WHERE source = ?", prefix).toArray();
  });

/** Whether OAUTH_KV holds a client record whose name is `name`. */
async function storedClientNamed(name: string): Promise<boolean> {
  let cursor: string | undefined;
  do {
    const page = await env.OAUTH_KV.list({ prefix: "client:", cursor });
    for (const key of page.keys) if (((await env.OAUTH_KV.get(key.name)) ?? "").includes(name)) return true;
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return false;
}

const long = (chars: number) => "x".repeat(chars);
const uri = (chars: number) => `https://app.example.com/${long(chars - 24)}`;

describe("finding 6: dynamic client registration fills storage", () => {
  it("refuses a 900 KB client_name before reading it whole, storing nothing", async ({ expect }) => {
    const source = newSource();
    const huge = `huge-${crypto.randomUUID()}-${long(900_000)}`;
    const res = await register(valid({ client_name: huge }), source);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: "invalid_request",
      error_description: `Request payload too large, must be at most ${REGISTRATION_BOUNDS.bodyBytes} bytes`,
    });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await rowsFrom(source)).toEqual([]);
    expect(await storedClientNamed(huge.slice(0, 41))).toBe(false);
  });

  it("bounds every field of the metadata, with RFC 7591's error codes", async ({ expect }) => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      ["name", { client_name: long(201) }, "invalid_client_metadata", "client_name is longer than 200 characters"],
      [
        "11 redirect URIs",
        { redirect_uris: Array(11).fill(REDIRECT_URI) },
        "invalid_redirect_uri",
        "redirect_uris has 11 entries; at most 10",
      ],
      ["long redirect URI", { redirect_uris: [uri(2001)] }, "invalid_redirect_uri", "A redirect URI is longer than 2000 characters"],
      ["client_uri", { client_uri: uri(2001) }, "invalid_client_metadata", "client_uri is longer than 2000 characters"],
      ["logo_uri", { logo_uri: uri(2001) }, "invalid_client_metadata", "logo_uri is longer than 2000 characters"],
      ["tos_uri", { tos_uri: uri(2001) }, "invalid_client_metadata", "tos_uri is longer than 2000 characters"],
      ["policy_uri", { policy_uri: uri(2001) }, "invalid_client_metadata", "policy_uri is longer than 2000 characters"],
      ["jwks_uri", { jwks_uri: uri(2001) }, "invalid_client_metadata", "jwks_uri is longer than 2000 characters"],
      ["contacts", { contacts: Array(11).fill("ops@example.com") }, "invalid_client_metadata", "contacts has 11 entries; at most 10"],
      ["a contact", { contacts: [long(321)] }, "invalid_client_metadata", "An entry of contacts is longer than 320 characters"],
      [
        "grant_types",
        { grant_types: Array(11).fill("authorization_code") },
        "invalid_client_metadata",
        "grant_types has 11 entries; at most 10",
      ],
      [
        "response_types",
        { response_types: [long(201)] },
        "invalid_client_metadata",
        "An entry of response_types is longer than 200 characters",
      ],
      ["scope", { scope: long(1001) }, "invalid_client_metadata", "scope is longer than 1000 characters"],
      ["software_id", { software_id: long(201) }, "invalid_client_metadata", "software_id is longer than 200 characters"],
      ["software_version", { software_version: long(201) }, "invalid_client_metadata", "software_version is longer than 200 characters"],
      [
        "software_statement",
        { software_statement: long(8193) },
        "invalid_client_metadata",
        "software_statement is longer than 8192 characters",
      ],
      ["jwks", { jwks: { keys: [{ n: long(8200) }] } }, "invalid_client_metadata", "jwks is longer than 8192 characters as JSON"],
      ["localized name", { "client_name#fr": long(201) }, "invalid_client_metadata", "client_name#fr is longer than 200 characters"],
      ["language tag", { [`client_name#${long(201)}`]: "x" }, "invalid_client_metadata", "The language tag of client_name is too long"],
      [
        "members",
        Object.fromEntries(Array.from({ length: 40 }, (_, n) => [`client_name#x${n}`, "x"])),
        "invalid_client_metadata",
        "The metadata has 43 members; at most 32",
      ],
    ];
    const source = newSource();
    for (const [what, extra, error, description] of cases) {
      const res = await register(valid(extra), source);
      expect([what, res.status, res.body]).toEqual([what, 400, { error, error_description: description }]);
    }
    // Nothing was stored, and refusals did not use the source's allowance.
    expect(await rowsFrom(source)).toEqual([]);
    // At every bound exactly, the registration goes through.
    const atBounds = await register(
      valid({
        client_name: `at-bounds-${long(190)}`,
        redirect_uris: Array.from({ length: 10 }, (_, n) => `http://127.0.0.1:${33_000 + n}/callback`),
        client_uri: uri(2000),
        contacts: Array(10).fill("ops@example.com"),
        scope: long(1000),
      }),
      source,
    );
    expect(atBounds.status).toBe(201);
    expect(atBounds.body.redirect_uris).toHaveLength(10);
    expect(await rowsFrom(source)).toEqual([
      {
        id: expect.any(String),
        client_id: atBounds.body.client_id,
        source: expect.any(String),
        registered_at: expect.any(Number),
        used_at: null,
      },
    ]);
  });

  it("lets one source register 20 clients an hour: of 30 parallel registrations, 10 are refused 429 with Retry-After", async ({
    expect,
  }) => {
    const source = newSource();
    const answers = await Promise.all(Array.from({ length: 30 }, () => register(valid(), source)));
    expect(answers.filter((res) => res.status === 201)).toHaveLength(REGISTRATION_LIMITS.perSourcePerHour);
    const refused = answers.filter((res) => res.status !== 201);
    expect(refused).toHaveLength(10);
    for (const res of refused) {
      expect(res.status).toBe(429);
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(3500);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(res.body).toEqual({
        error: "temporarily_unavailable",
        error_description: `Too many registrations from this address: 20 per hour; try again in ${retryAfter} s`,
      });
    }
    expect(await rowsFrom(source)).toHaveLength(20);
    // Another source, and another address in the same /64 is the same source.
    expect((await register(valid(), newSource())).status).toBe(201);
    expect((await register(valid(), source.replace(/::1$/, "::2"))).status).toBe(429);
    // A browser client reads the refusal (and its Retry-After) as it reads the library's answers.
    const fromBrowser = await api("/oauth/register", {
      rawBody: JSON.stringify(valid()),
      headers: { "cf-connecting-ip": source, origin: "https://inspector.example" },
    });
    expect(fromBrowser.headers.get("access-control-allow-origin")).toBe("https://inspector.example");
    expect(fromBrowser.headers.get("access-control-expose-headers")).toContain("Retry-After");
  });

  it("expires a client no admin consented to within 24 h; a consented one stays", async ({ expect }) => {
    const workspace = await createWorkspace();
    const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.com`;
    let cookie = await signInAdmin(workspace, email);
    const unused = await registerClient({ client_name: "Never connected" });
    const used = await exchange(cookie, `${workspace.ws} ${workspace.defaultProfileId}`);
    const authorizePage = async (clientId: string) => {
      const page = await SELF.fetch((await authorizationRequest(clientId)).url, { headers: { cookie } });
      return { status: page.status, text: await page.text() };
    };
    expect((await authorizePage(unused)).status).toBe(200);

    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + REGISTRATION_LIMITS.unusedLifetimeMs + 60_000);
      // The dev login's session lasts 12 h: the admin signs in again.
      cookie = await devLogin(email);
      const expired = await authorizePage(unused);
      expect(expired.status).toBe(400);
      expect(expired.text).toContain("The app&#39;s registration expired: no admin connected it within 24 hours of registering.");
      expect((await authorizePage(used.clientId)).status).toBe(200);
      const refreshed = await tokenRequest({ grant_type: "refresh_token", refresh_token: used.refreshToken, client_id: used.clientId });
      expect(refreshed.status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });

  it("the registry's sweep deletes exactly the unused clients past 24 h from OAUTH_KV", async ({ expect }) => {
    const unused = await registerClient({ client_name: "Swept" });
    const consented = await registerClient({ client_name: "Kept" });
    const fresh = await registerClient({ client_name: "Fresh" });
    // An instance of the registry's class of its own, so the sweep touches only this test's clients.
    const registry = env.OAUTH_REGISTRY.getByName(`test-${crypto.randomUUID()}`);
    const now = Date.now();
    for (const [clientId, at] of [
      [unused, now],
      [consented, now],
      [fresh, now + 60_000],
    ] as const) {
      const reservation = await registry.reserve(newSource(), at);
      if (!reservation.ok) throw new Error("no slot");
      await registry.confirm(reservation.id, clientId);
    }
    await registry.markUsed(consented);
    const swept = await registry.sweep(now + REGISTRATION_LIMITS.unusedLifetimeMs + 1_000);
    expect(swept).toEqual([unused]);
    expect(await env.OAUTH_KV.get(`client:${unused}`)).toBeNull();
    expect(await env.OAUTH_KV.get(`client:${consented}`)).not.toBeNull();
    expect(await env.OAUTH_KV.get(`client:${fresh}`)).not.toBeNull();
    // The next sweep is due when the fresh client's 24 h end.
    const alarm = await runInDurableObject(registry, (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBe(now + 60_000 + REGISTRATION_LIMITS.unusedLifetimeMs);
  });

  it("holds at most 10,000 clients: past that a registration is refused until an unused one expires", async ({ expect }) => {
    const registry = env.OAUTH_REGISTRY.getByName(`test-${crypto.randomUUID()}`);
    const now = Date.now();
    // Fill the instance as 10,000 registrations would (white-box: one SQL statement instead of 10,000 requests).
    await runInDurableObject(registry, (_instance, state) => {
      state.storage.sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO registrations (id, client_id, source, registered_at) SELECT 'r' || i, 'c' || i, 's' || i, ? + i FROM n`,
        REGISTRATION_LIMITS.maxClients,
        now - 1_000_000,
      );
    });
    expect(await registry.reserve("203.0.113.9", now)).toEqual({
      ok: false,
      reason: "full",
      retryAfterSeconds: Math.ceil((now - 1_000_000 + 1 + REGISTRATION_LIMITS.unusedLifetimeMs - now) / 1000),
    });
    await registry.sweep(now - 1_000_000 + 1 + REGISTRATION_LIMITS.unusedLifetimeMs);
    expect(await registry.reserve("203.0.113.9", now)).toEqual({ ok: true, id: expect.any(String) });
  }, 60_000);

  it("documents the bounds in docs/limits.md", async ({ expect }) => {
    const limits = (await import("../../docs/limits.md?raw")).default;
    for (const text of ["200 characters", "10 redirect URIs", "20 per source per hour", "10,000 registered clients", "24 h"]) {
      expect(limits).toContain(text);
    }
  });
});
