import type { ClientCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { declaresAll } from "../services/upstream.call.ts";
import type { PublicContract } from "../hooks/compiler/index.ts";
import { isListed } from "./access.ts";
import type { Catalog, CatalogTool } from "./catalog.ts";
import { projectOutputSchema } from "./projection.ts";

/**
 * What `tools/list` shows this client: only tools it could call now, each as
 * the client sees it. A tool whose active hook was built for an earlier
 * upstream definition is left out: every call to it is refused as
 * `hook_outdated` until the hook is redeployed, and its public contract may no
 * longer describe the tool. Calling it by name still explains why.
 */
export function listedTools(catalog: Catalog, profileId: string | null, clientCapabilities: ClientCapabilities | undefined): Tool[] {
  const tools: Tool[] = [];
  for (const tool of catalog.tools.values()) {
    if (!isDiscoverable(catalog, profileId, tool, clientCapabilities)) continue;
    tools.push(publicDefinition(tool, catalog.deployments.get(tool.uid)?.active?.contract ?? null));
  }
  return tools.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Whether discovery (Direct or Code) shows the tool to this profile; Code Mode calls only what it shows. */
export function isDiscoverable(
  catalog: Catalog,
  profileId: string | null,
  tool: CatalogTool,
  clientCapabilities: ClientCapabilities | undefined,
): boolean {
  // A tool the upstream lists only to clients with a capability this one did not declare does not exist for it.
  if (!declaresAll(clientCapabilities, tool.clientCapabilities)) return false;
  if (!isListed(catalog, profileId, tool)) return false;
  const active = catalog.deployments.get(tool.uid)?.active;
  return !active || active.definitionHash === tool.definitionHash;
}

/** The active hook's public contract where it replaces the upstream's, and the projection. */
function publicDefinition(tool: CatalogTool, contract: PublicContract | null): Tool {
  const definition = tool.definition;
  return {
    ...definition,
    name: tool.publicName,
    description: contract?.description ?? definition.description,
    inputSchema: (contract?.inputSchema ?? definition.inputSchema) as Tool["inputSchema"],
    outputSchema: projectOutputSchema(contract?.outputSchema ?? definition.outputSchema, tool.projection) as Tool["outputSchema"],
  };
}
