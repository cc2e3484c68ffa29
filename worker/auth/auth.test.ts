import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from "jose";
import { api, BOOTSTRAP_SECRET, CONSOLE_HEADERS, createKey, createWorkspace, demoGateway, devLogin } from "../../test/helpers.ts";
import { verifyAccessJwt } from "./access-jwt.ts";

describe("workspace bootstrap", () => {
  it("needs the deployment bootstrap secret", async ({ expect }) => {
    const missing = await api("/v1/workspaces", { body: { name: "x" } });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe("unauthorized");
    const wrong = await api("/v1/workspaces", { body: { name: "x" }, headers: { authorization: "Bearer not-the-secret" } });
    expect(wrong.status).toBe(401);
    const ok = await api("/v1/workspaces", { body: { name: "Acme" }, headers: { authorization: `Bearer ${BOOTSTRAP_SECRET}` } });
    expect(ok.status).toBe(201);
    expect(ok.body.adminKey.secret).toMatch(/^rr_[A-Za-z0-9_-]{43}$/);
    expect(ok.body.adminKey.key.scopes).toEqual(["admin"]);
  });
});

describe("API keys", () => {
  it("rejects a missing or invalid key with 401", async ({ expect }) => {
    const { ws } = await createWorkspace();
    const missing = await api(`/v1/workspaces/${ws}/services`);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: { code: "unauthorized", message: "Send an API key as 'Authorization: Bearer rr_…'" } });
    const invalid = await api(`/v1/workspaces/${ws}/services`, { key: "rr_not-a-real-key" });
    expect(invalid.status).toBe(401);
    expect(invalid.body.error).toEqual({ code: "unauthorized", message: "The credentials are invalid, expired or revoked" });
  });

  it("answers 403 naming the scope a key lacks", async ({ expect }) => {
    const workspace = await createWorkspace();
    const reader = await createKey(workspace, ["hooks:read"]);
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, { key: reader, body: { slug: "x", url: "https://example.com/mcp" } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: { code: "forbidden", message: "This credential lacks the 'admin' scope", details: { required: "admin" } },
    });
    expect((await api(`/v1/workspaces/${workspace.ws}/services`, { key: reader })).status).toBe(200);
  });

  it("shows a secret once, lists keys without it, and stops a revoked key", async ({ expect }) => {
    const workspace = await createWorkspace();
    const created = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: workspace.adminKey,
      body: { name: "ci", scopes: ["hooks:read", "hooks:write"] },
    });
    expect(created.status).toBe(201);
    const { secret, key } = created.body;
    const listed = await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey });
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(listed.body.keys.find((k: { id: string }) => k.id === key.id)).toMatchObject({
      name: "ci",
      prefix: secret.slice(0, 10),
      scopes: ["hooks:read", "hooks:write"],
      revokedAt: null,
    });
    const stored = await env.DB.prepare("SELECT key_hash FROM api_keys WHERE id = ?").bind(key.id).first<{ key_hash: string }>();
    expect(stored?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored?.key_hash).not.toContain(secret.slice(3));

    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { key: secret })).status).toBe(200);
    const revoked = await api(`/v1/workspaces/${workspace.ws}/keys/${key.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { key: secret })).status).toBe(401);
  });

  it("requires an access profile for keys that call tools", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: workspace.adminKey,
      body: { name: "agent", scopes: ["tools:call"] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.details.issues).toEqual([{ field: "json.profileId", message: "Required with tools:call" }]);
  });
});

describe("tenant isolation", () => {
  it("answers 404 for another workspace's workspace, services and tools", async ({ expect }) => {
    const mine = await createWorkspace();
    const theirs = await demoGateway();
    const notFound = { error: { code: "not_found", message: "Workspace not found" } };
    const otherWorkspace = await api(`/v1/workspaces/${theirs.ws}/services`, { key: mine.adminKey });
    expect(otherWorkspace.status).toBe(404);
    expect(otherWorkspace.body).toEqual(notFound);
    const unknownWorkspace = await api(`/v1/workspaces/ws_doesnotexist/services`, { key: mine.adminKey });
    expect(unknownWorkspace.body).toEqual(notFound);

    const tool = await api(`/v1/workspaces/${mine.ws}/tools/${theirs.toolUid("lookup_customer")}`, { key: mine.adminKey });
    expect(tool.status).toBe(404);
    expect(tool.body).toEqual({ error: { code: "not_found", message: "Tool not found" } });
    const service = await api(`/v1/workspaces/${mine.ws}/services/${theirs.service.id}`, { key: mine.adminKey });
    expect(service.status).toBe(404);
    expect(service.body).toEqual({ error: { code: "not_found", message: "Service not found" } });
  });
});

describe("request bodies", () => {
  it("answers malformed JSON with 400 invalid_json", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey, rawBody: '{"slug": "demo",' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: "invalid_json", message: "The request body is not valid JSON" } });
  });

  it("answers a body failing the schema with 400 naming the field", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "Not A Slug", url: "https://example.com/mcp" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.message).toBe("Invalid json.slug: lowercase letters, digits and '-', starting with a letter, at most 32");
    expect(res.body.error.details.issues[0].field).toBe("json.slug");
  });
});

describe("browser users", () => {
  it("signs in through the dev login only for members, with role-based scopes", async ({ expect }) => {
    const workspace = await createWorkspace("Browser", "owner@example.com");
    await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email: "viewer@example.com", role: "viewer" },
    });
    const stranger = await api("/dev/login", { body: { email: "stranger@example.com" }, headers: CONSOLE_HEADERS });
    expect(stranger.status).toBe(401);

    const cookie = await devLogin("viewer@example.com");
    const read = await api(`/v1/workspaces/${workspace.ws}/tools`, { headers: { cookie } });
    expect(read.status).toBe(200);
    const write = await api(`/v1/workspaces/${workspace.ws}/profiles`, { headers: { cookie, ...CONSOLE_HEADERS }, body: { name: "p" } });
    expect(write.status).toBe(403);

    // Emails are kept lower-cased; a sign-in (or an Access JWT) naming the member in other letters is the same member.
    await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email: "Mixed.Case@Example.com", role: "viewer" },
    });
    const mixed = await api("/dev/login", { body: { email: "MIXED.case@example.COM" }, headers: CONSOLE_HEADERS });
    expect(mixed.status).toBe(200);
    expect(mixed.body.user.email).toBe("mixed.case@example.com");

    const forged = await api(`/v1/workspaces/${workspace.ws}/tools`, { headers: { cookie: `${cookie.slice(0, -3)}abc` } });
    expect(forged.status).toBe(401);
    const other = await createWorkspace();
    expect((await api(`/v1/workspaces/${other.ws}/tools`, { headers: { cookie } })).status).toBe(404);
  });

  it("verifies Cloudflare Access JWTs: signature, issuer, audience and expiry", async ({ expect }) => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" }] });
    const options = { teamDomain: "acme.cloudflareaccess.com", audience: "aud-123", keys };
    const token = (claims: { iss?: string; aud?: string; exp?: string }) =>
      new SignJWT({ email: "ada@example.com" })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer(claims.iss ?? "https://acme.cloudflareaccess.com")
        .setAudience(claims.aud ?? "aud-123")
        .setExpirationTime(claims.exp ?? "5m")
        .sign(privateKey);
    expect(await verifyAccessJwt(await token({}), options)).toBe("ada@example.com");
    expect(await verifyAccessJwt(await token({ aud: "other" }), options)).toBeNull();
    expect(await verifyAccessJwt(await token({ iss: "https://evil.example" }), options)).toBeNull();
    expect(await verifyAccessJwt(await token({ exp: "-1m" }), options)).toBeNull();
    const stranger = await generateKeyPair("RS256");
    const forged = await new SignJWT({ email: "ada@example.com" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer("https://acme.cloudflareaccess.com")
      .setAudience("aud-123")
      .setExpirationTime("5m")
      .sign(stranger.privateKey);
    expect(await verifyAccessJwt(forged, options)).toBeNull();
  });
});

describe("whoami", () => {
  it("names a key's one workspace with its scopes and channel, never the secret", async ({ expect }) => {
    const workspace = await createWorkspace("Whoami workspace");
    const writer = await createKey(workspace, ["hooks:write"]);
    const res = await api("/v1/whoami", { key: writer, headers: { "x-rayrun-client": "rayrun-cli" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kind: "key",
      id: expect.stringMatching(/^key_/),
      channel: "cli",
      mcpUrl: "https://rayrun.test/mcp",
      workspaces: [{ id: workspace.ws, name: "Whoami workspace", role: null, scopes: ["hooks:write"] }],
    });
    expect(JSON.stringify(res.body)).not.toContain(writer);
    expect((await api("/v1/whoami", { key: workspace.adminKey })).body.workspaces[0].scopes).toEqual([
      "hooks:read",
      "hooks:write",
      "admin",
    ]);
  });

  it("lists a browser user's memberships with roles, and answers 401 without credentials", async ({ expect }) => {
    const first = await createWorkspace("B first");
    const second = await createWorkspace("A second");
    const email = `${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
    await api(`/v1/workspaces/${first.ws}/members`, { method: "PUT", key: first.adminKey, body: { email, role: "viewer" } });
    await api(`/v1/workspaces/${second.ws}/members`, { method: "PUT", key: second.adminKey, body: { email, role: "admin" } });
    const cookie = await devLogin(email);
    const res = await api("/v1/whoami", { headers: { cookie } });
    expect(res.body).toMatchObject({ kind: "user", email, channel: "browser" });
    expect(res.body.workspaces).toEqual([
      { id: second.ws, name: "A second", role: "admin", scopes: ["hooks:read", "hooks:write", "admin"] },
      { id: first.ws, name: "B first", role: "viewer", scopes: ["hooks:read"] },
    ]);
    const anonymous = await api("/v1/whoami");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("unauthorized");

    // Sign out ends the dev session: the cookie is cleared, and the console then answers as signed out. Like every
    // cookie-signed write it must come from the console: another page cannot sign the admin out.
    const foreign = await api("/dev/logout", { method: "POST", headers: { cookie, origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe("csrf_refused");
    const out = await api("/dev/logout", { method: "POST", headers: { cookie, ...CONSOLE_HEADERS } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/);
  });
});
