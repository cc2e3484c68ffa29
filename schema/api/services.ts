import { z } from "@hono/zod-openapi";
import { ServiceAuthorizationSchema, ServiceOAuthOptions, UpdateServiceOAuthOptions } from "./upstream-oauth.ts";

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** Tab, space and visible ASCII: CR, LF and NUL break every request, and non-ASCII is sent as whatever bytes the runtime picks. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
/** Headers the gateway itself controls; a service may not override them. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "connection",
]);

export const SecretHeadersSchema = z
  .record(
    z
      .string()
      .regex(HEADER_NAME, "not a valid header name")
      .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), "this header is set by the gateway"),
    z.string().max(8192).regex(HEADER_VALUE, "header values may contain only tab, space and visible ASCII (no CR, LF or other controls)"),
  )
  .refine((headers) => Object.keys(headers).length <= 20, "at most 20 secret headers")
  .openapi({ description: "Sent to the upstream on every request; encrypted at rest and never returned" });

const ServiceUrlSchema = z
  .string()
  .max(2048)
  .openapi({
    description:
      "The upstream's MCP endpoint. Its query string is kept like secret headers, for upstreams that take a key in the URL " +
      "(`?api_key=…`): encrypted at rest and never returned; the service shows the URL without it, and the parameters' names",
    example: "https://mcp.example.com/mcp",
  });

export const CreateServiceBody = z
  .object({
    slug: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,31}$/, "lowercase letters, digits and '-', starting with a letter, at most 32")
      .openapi({ description: "Immutable; prefixes public tool names as `{slug}__{tool}`", example: "docs" }),
    url: ServiceUrlSchema,
    headers: SecretHeadersSchema.optional(),
    requiresAuthorization: z.literal(false).optional().openapi({
      description: "No longer set by hand: a service needs authorization when its upstream asks for OAuth (see `oauth`)",
    }),
    oauth: ServiceOAuthOptions.optional().openapi({
      description: "Used when the upstream answers 401 with a Bearer challenge: the service is then stored pending authorization",
    }),
    payloadCapture: z.boolean().optional(),
    reviewInitialTools: z
      .boolean()
      .optional()
      .openapi({
        description:
          "Whether the tools this first indexing finds start in review (refused `tool_review_required` until an admin approves each) " +
          "instead of active. Default false. Tools a later refresh adds always start in review.",
      }),
  })
  .openapi("CreateService");

export const UpdateServiceBody = z
  .object({
    url: ServiceUrlSchema.optional().openapi({
      description: "Replaces the URL with its query: a URL sent without one removes the secret query the service had",
    }),
    headers: SecretHeadersSchema.optional(),
    requiresAuthorization: z.literal(false).optional().openapi({
      description: "Lifts a hold set by hand before upstream OAuth existed; `true` is refused (authorization follows the upstream's OAuth)",
    }),
    oauth: UpdateServiceOAuthOptions.nullable()
      .optional()
      .openapi({
        description:
          "Change the service's upstream OAuth: its mode or client (every grant is revoked, the service waits for authorization again), " +
          "OAuth for a service whose upstream now asks for it, or `null` to remove it, when the upstream answers with the service's headers " +
          'alone (checked by indexing through them). docs/upstream-oauth.md, "Changing a service\'s OAuth"',
      }),
    payloadCapture: z.boolean().optional(),
  })
  .openapi("UpdateService");

export const ServiceSchema = z
  .object({
    id: z.string(),
    slug: z.string(),
    url: z.string().openapi({ description: "Without its query string, whose values are secret" }),
    secretQueryNames: z.array(z.string()).openapi({
      description:
        "The names of the URL's query parameters (a part without `=` is all value and not named), whose values are never returned",
    }),
    secretHeaderNames: z.array(z.string()),
    requiresAuthorization: z.boolean().openapi({
      description:
        "Calls are refused `upstream_authorization_required`: an OAuth service is pending (or a hold from before upstream OAuth)",
    }),
    authorization: ServiceAuthorizationSchema,
    payloadCapture: z.boolean(),
    reviewInitialTools: z.boolean().openapi({ description: "Whether the tools of the service's first indexing started in review" }),
    serverInfo: z.unknown(),
    protocol: z.enum(["2026-07-28", "2025-era"]).openapi({
      description:
        "The MCP revision the gateway speaks to the upstream, found at indexing: `2026-07-28` when its `server/discover` offers it, else a 2025-era revision negotiated by `initialize`",
    }),
    indexedAt: z.string().nullable(),
    createdAt: z.string(),
    deletedAt: z.string().nullable(),
  })
  .openapi("Service");

export const IndexSummarySchema = z
  .object({
    added: z.array(z.string()),
    changed: z.array(z.string()),
    removed: z.array(z.string()),
    unchanged: z.number().int(),
    review: z.array(z.string()).openapi({
      description:
        "Tools this pass put in review, refused `tool_review_required` until an admin approves them: changed definitions, and new tools " +
        "(always on a refresh; on connecting, when `reviewInitialTools` is set)",
    }),
    schemaTooComplex: z.array(z.object({ name: z.string(), bound: z.string() })).openapi({
      description: "Tools whose schemas break a validation bound: kept, hidden from discovery, every call refused `schema_too_complex`",
    }),
    invalidNames: z.array(z.string()).openapi({
      description:
        "Tools whose public names MCP does not allow (1–128 of A–Z, a–z, 0–9, `_`, `-`, `.`): kept, hidden from discovery, every call refused `tool_name_invalid`",
    }),
    instructionsTruncated: z.literal(true).optional().openapi({
      description: "The upstream's instructions were longer than 4,096 characters; the gateway keeps the first 4,095 and `…`",
    }),
  })
  .openapi("IndexSummary");

export const ServiceParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" } }),
  svc: z.string().openapi({ param: { name: "svc", in: "path" } }),
});

const ContentModeSchema = z.enum(["allow", "block"]);

export const PutServicePolicyBody = z
  .object({
    profileId: z.string(),
    resources: ContentModeSchema.optional().openapi({
      description: "The service's resources and resource templates: listed, readable and completable, or unknown to the profile",
    }),
    prompts: ContentModeSchema.optional().openapi({
      description: "The service's prompts: listed, gettable and completable, or unknown to the profile",
    }),
  })
  .refine((body) => body.resources !== undefined || body.prompts !== undefined, "set resources, prompts or both")
  .openapi("PutServicePolicy");

export const ServicePolicySchema = z
  .object({
    profileId: z.string(),
    serviceId: z.string(),
    resources: ContentModeSchema,
    prompts: ContentModeSchema,
    updatedBy: z.string(),
    updatedAt: z.string(),
  })
  .openapi("ServicePolicy");
