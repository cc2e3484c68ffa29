import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";

/** The capabilities whose requests an upstream may send during a call, kept only as the client declared them. */
export function relayedCapabilities(capabilities: ClientCapabilities | undefined): ClientCapabilities {
  const relayed: ClientCapabilities = {};
  if (capabilities?.sampling) relayed.sampling = capabilities.sampling;
  if (capabilities?.elicitation) relayed.elicitation = capabilities.elicitation;
  if (capabilities?.roots) relayed.roots = capabilities.roots;
  return relayed;
}
