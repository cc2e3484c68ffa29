// What `rayrun hooks check` says of a file's declared tools: the `[tools]` table with
// each tool's input, and `--probe <tool>`, one real call through the rules (opt-in:
// it uses the network and any key the tool reads).
import type { RulesConfig } from "../../core/config.ts";
import type { ToolInput } from "../../core/events.ts";
import type { LiveLine } from "../../core/live/record.ts";
import type { AnthropicToolDefinition, JsonSchema } from "../../core/live/schema.ts";
import type { HookRun } from "../hook-run.ts";

export interface ToolListing {
  name: string;
  kind: "http" | "callable" | "connector";
  description?: string;
  vendor?: string;
  /** Field → its shorthand (`"integer?"`): what a call takes. */
  input: Record<string, string>;
}

export interface ProbeReport {
  tool: string;
  /** Always true: a probe is a real call. */
  network: true;
  input: ToolInput;
  result?: unknown;
  error?: { code?: string; message: string };
  /** The call's record line (secrets redacted). */
  line?: LiveLine;
}

export async function listTools(config: RulesConfig, run: HookRun): Promise<ToolListing[]> {
  const specs = new Map((config.live?.tools ?? []).map((spec) => [spec.name, spec]));
  const definitions = (await run.toolDefinitions("anthropic")) as AnthropicToolDefinition[];
  return definitions.map((definition) => {
    const spec = specs.get(definition.name);
    const required = new Set(definition.input_schema.required ?? []);
    const input = Object.fromEntries(
      Object.entries(definition.input_schema.properties).map(([field, schema]) => [
        field,
        `${typeName(schema)}${required.has(field) ? "" : "?"}`,
      ]),
    );
    return {
      name: definition.name,
      kind: spec?.kind ?? "http",
      ...(definition.description === undefined ? {} : { description: definition.description }),
      ...(spec?.vendor === undefined ? {} : { vendor: spec.vendor }),
      input,
    };
  });
}

function typeName(schema: JsonSchema): string {
  if (schema.type === "array" && schema.items !== null && typeof schema.items === "object")
    return `${typeName(schema.items as JsonSchema)}[]`;
  return typeof schema.type === "string" ? schema.type : "any";
}

/** One real call of a declared tool, through the file's rules; a failure is reported, not thrown. */
export async function probeTool(run: HookRun, tool: string, input: ToolInput): Promise<ProbeReport> {
  const tools = await run.tools();
  const call = tools[tool];
  if (!call)
    return {
      tool,
      network: true,
      input,
      error: { code: "unknown_tool", message: `no declared tool "${tool}" (tools: ${Object.keys(tools).join(", ") || "none"})` },
    };
  const report: ProbeReport = { tool, network: true, input };
  try {
    report.result = await call(input);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    report.error = { ...(typeof code === "string" ? { code } : {}), message: error instanceof Error ? error.message : String(error) };
  }
  report.line = run.liveLog.at(-1);
  return report;
}

export function describeTools(tools: readonly ToolListing[], probe: ProbeReport | undefined): string[] {
  const lines = tools.length ? ["tools:"] : [];
  for (const tool of tools) {
    const input = Object.entries(tool.input).map(([field, type]) => `${field}: ${type}`);
    lines.push(
      `  ${tool.name} (${tool.kind}${tool.vendor ? `, vendor ${tool.vendor}` : ""}) { ${input.join(", ")} }${tool.description ? `  ${tool.description}` : ""}`,
    );
  }
  if (probe) {
    lines.push(`probe ${probe.tool} (a real call over the network): ${probe.error ? `failed: ${probe.error.message}` : "answered"}`);
    if (!probe.error) lines.push(`  ${JSON.stringify(probe.result).slice(0, 2000)}`);
  }
  return lines;
}
