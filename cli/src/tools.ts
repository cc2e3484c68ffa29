import type { Context } from "./context.ts";
import { CliError, EXIT } from "./errors.ts";

export async function listTools(ctx: Context) {
  const { tools } = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools", { params: { path: { ws: ctx.workspace } } }));
  return tools;
}

/** A tool as the API lists it (the client's reading of the generated types). */
export type Tool = Awaited<ReturnType<typeof listTools>>[number];

/** `<tool>` is a public name (`demo__search_release_notes`) or a toolUid. */
export async function resolveTool(ctx: Context, ref: string): Promise<Tool> {
  const found = (await listTools(ctx)).find((tool) => tool.uid === ref || tool.publicName === ref);
  if (!found) {
    throw new CliError(
      `No tool '${ref}' in workspace ${ctx.workspace}; \`rayrun tools list\` shows public names and uids`,
      EXIT.refused,
      "unknown_tool",
    );
  }
  return found;
}
