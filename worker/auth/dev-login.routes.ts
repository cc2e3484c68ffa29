import { Hono } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../http/app.ts";
import { ApiError } from "../http/errors.ts";
import { DEV_SESSION_COOKIE, issueDevSession } from "./dev-session.ts";
import { findUserByEmail } from "./users.store.ts";

/**
 * Local stand-in for Cloudflare Access. Answers 404 unless the environment sets
 * DEV_LOGIN=on, which only `npm start` and the tests do.
 */
export const devLoginRoutes = new Hono<AppEnv>();

devLoginRoutes.post("/dev/login", async (c) => {
  if (c.env.DEV_LOGIN !== "on") throw new ApiError("not_found", { message: "Not found" });
  const body = (await c.req.json().catch(() => null)) as { email?: unknown } | null;
  const email = typeof body?.email === "string" ? body.email : "";
  const user = email ? await findUserByEmail(c.env.DB, email) : null;
  if (!user) throw new ApiError("unauthorized", { message: "No member with that email; an admin must add you first" });
  setCookie(c, DEV_SESSION_COOKIE, await issueDevSession(user.email, c.env.SECRETS_KEY), {
    httpOnly: true,
    sameSite: "Strict",
    path: "/",
  });
  return c.json({ user });
});

/** Ends the dev session (the console's Sign out). Deployed, Cloudflare Access signs out at /cdn-cgi/access/logout. */
devLoginRoutes.post("/dev/logout", (c) => {
  if (c.env.DEV_LOGIN !== "on") throw new ApiError("not_found", { message: "Not found" });
  deleteCookie(c, DEV_SESSION_COOKIE, { httpOnly: true, sameSite: "Strict", path: "/" });
  return c.body(null, 204);
});
