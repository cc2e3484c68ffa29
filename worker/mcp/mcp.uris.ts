import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * Resource URIs through the gateway: `rayrun://{service}/{upstream URI}`, the
 * upstream's URI appended verbatim. Slugs are `^[a-z][a-z0-9-]{0,31}$`, so the
 * first `/` after the scheme always ends the slug, and everything after it is
 * the upstream's URI byte for byte. A template maps the same way: the prefix has
 * no `{`, so a client that fills the gateway's template gets the prefix plus the
 * upstream's own filled template, and reading it goes back to that service.
 */
export const GATEWAY_URI_SCHEME = "rayrun://";

const SLUG = /^[a-z][a-z0-9-]{0,31}$/;

export const gatewayUri = (slug: string, upstreamUri: string) => `${GATEWAY_URI_SCHEME}${slug}/${upstreamUri}`;

/** The service slug and the upstream URI of a gateway URI, or null when it is not one. */
export function parseGatewayUri(uri: string): { slug: string; upstreamUri: string } | null {
  if (!uri.startsWith(GATEWAY_URI_SCHEME)) return null;
  const rest = uri.slice(GATEWAY_URI_SCHEME.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return null;
  const slug = rest.slice(0, slash);
  const upstreamUri = rest.slice(slash + 1);
  if (!SLUG.test(slug) || !upstreamUri) return null;
  return { slug, upstreamUri };
}

type ContentBlock = CallToolResult["content"][number];

/**
 * A content block with its resource URI mapped to the gateway's, so a client can
 * read a linked or embedded resource back through the gateway (under the same policy).
 */
export function mapContentBlock(block: ContentBlock, slug: string): ContentBlock {
  if (block.type === "resource_link") return { ...block, uri: gatewayUri(slug, block.uri) };
  if (block.type === "resource") return { ...block, resource: { ...block.resource, uri: gatewayUri(slug, block.resource.uri) } };
  return block;
}

/** A tool result whose resource links and embedded resources point at the gateway. */
export function mapResultLinks(result: CallToolResult, slug: string): CallToolResult {
  if (!Array.isArray(result.content) || !result.content.some((block) => block.type === "resource_link" || block.type === "resource")) {
    return result;
  }
  return { ...result, content: result.content.map((block) => mapContentBlock(block, slug)) };
}
