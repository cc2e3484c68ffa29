/**
 * The names MCP lets a tool have (2025-11-25, SEP-986): 1 to 128 ASCII letters, digits, `_`, `-` and `.`. Clients
 * pass tool names on to model APIs, which refuse a request whose tool list holds one name they cannot take, so one
 * upstream tool named `a b/<x>` (or nothing at all) would break every agent's whole tool list through the gateway.
 */
const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const MAX_TOOL_NAME_LENGTH = 128;

/**
 * Why clients cannot be shown the tool the upstream calls `name` under its public name (`publicName`:
 * `{serviceSlug}__{name}`, what they call), or null when they can. Such a tool is indexed like any other, hidden
 * from discovery, and every call of it is refused `tool_name_invalid`.
 */
export function toolNameProblem(name: string, publicName: string): string | null {
  if (!name) return "the upstream gave it no name";
  if (MCP_TOOL_NAME.test(publicName)) return null;
  if (publicName.length > MAX_TOOL_NAME_LENGTH) {
    return `its public name is ${publicName.length} characters long; MCP tool names have at most ${MAX_TOOL_NAME_LENGTH}`;
  }
  return "its public name holds characters MCP tool names may not have (only A–Z, a–z, 0–9, _, - and .)";
}
