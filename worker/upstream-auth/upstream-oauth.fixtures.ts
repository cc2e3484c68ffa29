import { SELF } from "cloudflare:test";
import { inject } from "vitest";
import { api, ORIGIN, type TestWorkspace } from "../../test/helpers.ts";
import type { LabOptions, LabState } from "../../test/oauth-lab/lab.ts";

/** A fresh OAuth-protected upstream from the lab (test/oauth-lab/lab.ts): its own authorization server and /mcp. */
export async function newLab(options: LabOptions = {}) {
  const res = await fetch(`${inject("oauthLabOrigin")}/labs`, { method: "POST", body: JSON.stringify(options) });
  if (res.status !== 201) throw new Error(`lab: ${res.status} ${await res.text()}`);
  const { origin, mcpUrl } = (await res.json()) as { origin: string; mcpUrl: string };
  return {
    origin,
    mcpUrl,
    state: async () => (await (await fetch(`${origin}/__lab/state`)).json()) as LabState,
    control: async (action: "revoke-refresh-tokens" | "expire-access-tokens") => {
      await (await fetch(`${origin}/__lab/${action}`, { method: "POST" })).arrayBuffer();
    },
    /** A personal access token for `user` (no OAuth grant): a static `authorization` header the upstream accepts. */
    personalToken: async (user: string) =>
      (
        (await (
          await fetch(`${origin}/__lab/personal-token`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ user }),
          })
        ).json()) as { token: string }
      ).token,
    /** A client registered by hand at the authorization server (RFC 7591 from the test), as an admin would for a pre-registered client. */
    registerClient: async () =>
      (await (
        await fetch(`${origin}/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            client_name: "registered by hand",
            redirect_uris: ["https://rayrun.test/oauth/upstream/callback"],
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "client_secret_basic",
          }),
        })
      ).json()) as { client_id: string; client_secret: string },
    /** What the authorization server would fetch from a client ID metadata document URL. */
    addClient: async (document: unknown) => {
      await (
        await fetch(`${origin}/__lab/client-documents`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(document),
        })
      ).arrayBuffer();
    },
  };
}

export type Lab = Awaited<ReturnType<typeof newLab>>;

/** How a test authenticates to the gateway: an API key, or a browser user's dev-login cookie. */
export type As = { key: string } | { cookie: string };

const credentials = (as: As): Record<string, string> =>
  "key" in as ? { authorization: `Bearer ${as.key}` } : { cookie: as.cookie, "sec-fetch-site": "same-origin", origin: ORIGIN };

export async function connectOAuthService(workspace: TestWorkspace, lab: Lab, body: Record<string, unknown> = {}) {
  return api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey, body: { slug: "lab", url: lab.mcpUrl, ...body } });
}

export async function startAuthorize(workspace: TestWorkspace, serviceId: string, as: As, body: Record<string, unknown> = {}) {
  return api(`/v1/workspaces/${workspace.ws}/services/${serviceId}/authorize`, { headers: credentials(as), body });
}

/** The cookie pairs a response sets, as a Cookie header. */
const cookiesOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(";")[0]!)
    .join("; ");

/** The flow id the gateway's confirmation page posts (a link bound to no signed-in user shows that page first). */
export const confirmationFlow = (html: string) =>
  /<form method="post" action="\/oauth\/upstream\/start"><input type="hidden" name="flow" value="([^"]+)">/.exec(html)?.[1];

/**
 * Opens an authorization link as a browser does, pressing Continue on the gateway's confirmation page where it
 * shows one: the answer that sends the browser on to the authorization server (or the refusal, its body unread).
 */
export async function openAuthorizationLink(link: string, signedIn: Record<string, string> = {}): Promise<Response> {
  const start = await SELF.fetch(link, { headers: signedIn, redirect: "manual" });
  if (start.status !== 200) return start;
  const page = await start.text();
  const flow = confirmationFlow(page);
  if (!flow) return new Response(page, { status: start.status, headers: start.headers });
  return SELF.fetch(new URL("/oauth/upstream/start", link), {
    method: "POST",
    headers: {
      ...signedIn,
      "content-type": "application/x-www-form-urlencoded",
      "sec-fetch-site": "same-origin",
      origin: new URL(link).origin,
    },
    body: new URLSearchParams({ flow }),
    redirect: "manual",
  });
}

/**
 * What a person does with an authorization link, driven with fetch: open it in
 * a browser (signed in when `cookie` is given), press Continue on the gateway's
 * confirmation page where it shows one, read the authorization server's
 * consent page, approve or deny as an upstream user, and follow the redirect
 * back to the gateway's callback with the cookie the start link set.
 */
export async function authorizeInBrowser(link: string, options: { cookie?: string; user?: string; decision?: "approve" | "deny" } = {}) {
  const start = await openAuthorizationLink(link, options.cookie ? { cookie: options.cookie } : {});
  if (start.status !== 302 && start.status !== 303) return { start, startBody: await start.text() };
  const binding = cookiesOf(start);
  const authorizeUrl = start.headers.get("location")!;
  const consent = await fetch(authorizeUrl);
  const html = await consent.text();
  if (consent.status !== 200) throw new Error(`consent page: ${consent.status} ${html}`);
  const form = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    form.set(match[1]!, match[2]!.replaceAll("&quot;", '"'));
  form.set("user", options.user ?? "alice");
  form.set("decision", options.decision ?? "approve");
  const labOrigin = new URL(authorizeUrl).origin;
  const approved = await fetch(`${labOrigin}/consent`, { method: "POST", body: form, redirect: "manual" });
  const callbackUrl = approved.headers.get("location")!;
  const cookie = [options.cookie, binding].filter(Boolean).join("; ");
  const callback = await SELF.fetch(callbackUrl, { headers: { cookie }, redirect: "manual" });
  return { start, authorizeUrl, callbackUrl, binding, callback, callbackBody: await callback.text() };
}

/** Connect + authorize as the workspace's admin key: an authorized, indexed service (shared unless `body.oauth` says). */
export async function authorizedService(workspace: TestWorkspace, lab: Lab, body: Record<string, unknown> = {}, upstreamUser = "alice") {
  const created = await connectOAuthService(workspace, lab, body);
  if (created.status !== 201) throw new Error(`connect: ${created.status} ${JSON.stringify(created.body)}`);
  const serviceId = created.body.service.id as string;
  const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
  if (link.status !== 200) throw new Error(`authorize: ${link.status} ${JSON.stringify(link.body)}`);
  const flow = await authorizeInBrowser(link.body.authorizationUrl, { user: upstreamUser });
  if (flow.callback?.status !== 200) throw new Error(`callback: ${flow.callback?.status} ${flow.callbackBody}`);
  return { serviceId, flow };
}

export const serviceOf = async (workspace: TestWorkspace, serviceId: string) =>
  (await api(`/v1/workspaces/${workspace.ws}/services/${serviceId}`, { key: workspace.adminKey })).body;

export const grantsOf = async (workspace: TestWorkspace) =>
  (await api(`/v1/workspaces/${workspace.ws}/upstream-grants`, { key: workspace.adminKey })).body.grants as Record<string, unknown>[];
