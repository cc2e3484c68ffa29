import { z } from "@hono/zod-openapi";
import { EffectiveAt } from "./hooks.ts";

export const OAuthGrantSchema = z
  .object({
    id: z.string(),
    clientId: z.string(),
    clientName: z.string().nullable().openapi({ description: "As the client registered it: self-asserted, not verified" }),
    profileId: z.string().nullable(),
    scopes: z.array(z.string()),
    approvedBy: z.string().nullable().openapi({ description: "Email of the admin who consented" }),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
  })
  .openapi("OAuthGrant");

export const RevokedOAuthGrantSchema = OAuthGrantSchema.extend({ effectiveAt: EffectiveAt }).openapi("RevokedOAuthGrant");

export const OAuthGrantParams = z.object({
  grantId: z.string().openapi({ param: { name: "grantId", in: "path" } }),
});
