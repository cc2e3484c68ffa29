import { z } from "@hono/zod-openapi";

/** What an admin may say about the OAuth client when connecting a service whose upstream asks for OAuth. */
export const ServiceOAuthOptions = z
  .object({
    mode: z.enum(["shared", "per_user"]).optional().openapi({
      description:
        "`shared` (default): one grant for the workspace, used for every caller. `per_user`: each key's owner or OAuth-connected user authorizes their own",
    }),
    clientId: z.string().min(1).max(2048).optional().openapi({
      description:
        "A client registered with the authorization server by hand; without it the gateway uses a client ID metadata document or dynamic registration",
    }),
    clientSecret: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .openapi({ description: "That client's secret: encrypted at rest, never returned" }),
  })
  .refine((options) => options.clientSecret === undefined || options.clientId !== undefined, "clientSecret needs clientId")
  .openapi("ServiceOAuthOptions");

/**
 * What PATCH may change of an existing service's upstream OAuth (`null` in its place removes OAuth). Changing the mode or
 * the client revokes and deletes every grant (they were made under the old one) and returns the service to pending.
 */
export const UpdateServiceOAuthOptions = z
  .object({
    mode: z.enum(["shared", "per_user"]).optional().openapi({ description: "Switch between one workspace grant and a grant per caller" }),
    clientId: z.string().min(1).max(2048).nullable().optional().openapi({
      description:
        "A client registered with the authorization server by hand; `null` forgets the pre-registered client and registers the gateway's own way (client ID metadata document or dynamic registration). The same id with a new `clientSecret` only replaces the secret",
    }),
    clientSecret: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .openapi({ description: "That client's secret: encrypted at rest, never returned" }),
  })
  .refine((options) => options.clientSecret === undefined || typeof options.clientId === "string", "clientSecret needs clientId")
  .openapi("UpdateServiceOAuth");

const PendingReasonSchema = z.object({
  code: z.string().openapi({
    description:
      "`connected`, `disconnected`, `invalid_grant`, `oauth_changed` (its mode or client was changed), or the authorization server's or gateway's error code",
  }),
  message: z.string(),
  at: z.string(),
});

export const ServiceAuthorizationSchema = z
  .union([
    z.object({ kind: z.literal("none") }),
    z.object({
      kind: z.literal("oauth"),
      mode: z.enum(["shared", "per_user"]),
      status: z
        .enum(["pending", "authorized"])
        .openapi({ description: "Calls are refused `upstream_authorization_required` while pending" }),
      pendingReason: PendingReasonSchema.nullable(),
      resource: z.string().openapi({ description: "The RFC 8707 resource tokens are requested for" }),
      issuer: z.string(),
      scopes: z.array(z.string()),
      registration: z.enum(["pre_registered", "client_metadata_document", "dynamic"]),
      clientId: z.string(),
      revocation: z.boolean().openapi({ description: "The authorization server offers RFC 7009 revocation, used on disconnect" }),
      authorizedBy: z.string().nullable(),
      authorizedAt: z.string().nullable(),
    }),
  ])
  .openapi("ServiceAuthorization");

export const AuthorizeServiceBody = z
  .object({
    returnTo: z.string().max(2048).optional().openapi({
      description: "Where the browser goes after the callback; must be on the console's origin (the gateway's PUBLIC_URL, or CONSOLE_URL)",
    }),
  })
  .openapi("AuthorizeService");

export const AuthorizationLinkSchema = z
  .object({
    authorizationUrl: z.string().openapi({
      description:
        "Open in a browser (signed in as yourself when you are a user): it binds the flow to that browser and goes to the authorization server",
    }),
    expiresAt: z.string(),
  })
  .openapi("AuthorizationLink");

export const UpstreamGrantSchema = z
  .object({
    id: z.string(),
    serviceId: z.string(),
    serviceSlug: z.string().nullable(),
    mode: z.enum(["shared", "per_user"]),
    subject: z.string().openapi({ description: "`workspace` (shared), `user:<id>`, `key:<id>` or `oauth:<client id>`" }),
    scopes: z.array(z.string()),
    expiresAt: z.string().nullable().openapi({ description: "When the access token expires (it is refreshed ahead of it)" }),
    authorizedBy: z.string(),
    createdAt: z.string(),
    refreshedAt: z.string().nullable(),
    lastUsedAt: z.string().nullable().openapi({ description: "Updated at most once a minute" }),
  })
  .openapi("UpstreamGrant");

export const UpstreamGrantParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" } }),
  grantId: z.string().openapi({ param: { name: "grantId", in: "path" } }),
});

export const DisconnectSummarySchema = z
  .object({
    grants: z.number().int().openapi({ description: "Grants deleted" }),
    revoked: z.number().int().openapi({ description: "Of those, grants the authorization server confirmed revoked (RFC 7009)" }),
  })
  .openapi("DisconnectSummary");
