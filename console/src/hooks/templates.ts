// Hook sources to start from, generated from the tool's schemas: a skeleton that
// passes everything through, typed with the tool's own `UpstreamArguments` and
// `UpstreamResult` (its generated declarations), and one template per intent.
// Each compiles and type-checks as generated (the browser test checks every one).
import type { HookTool } from "./tool.ts";

type Schema = { type?: unknown; properties?: Record<string, Schema>; required?: unknown; items?: unknown };

export type TemplateId = "skeleton" | "rewrite" | "reject" | "approval" | "trim";
export const TEMPLATES: { id: TemplateId; label: string }[] = [
  { id: "skeleton", label: "Pass everything through (typed skeleton)" },
  { id: "rewrite", label: "Rewrite arguments" },
  { id: "reject", label: "Reject some calls" },
  { id: "approval", label: "Require approval" },
  { id: "trim", label: "Trim the result" },
];

// Short names for the stages' typed inputs keep every line within Prettier's 80 columns, so a save
// stores the template as generated.
const BEFORE_SIGNATURE = "before({ arguments: args, context }: BeforeInput): Rayrun.BeforeReturn";
const AFTER_SIGNATURE = "after({ result, context }: AfterInput): Rayrun.AfterReturn<UpstreamResult>";
const PASS_BEFORE = `  ${BEFORE_SIGNATURE.replace("{ arguments: args, context }", "{ arguments: args }")} {
    return { action: "continue", arguments: args };
  },`;
const PASS_AFTER = `  ${AFTER_SIGNATURE.replace("{ result, context }", "{ result }")} {
    return { action: "return", result };
  },`;

const isIdentifier = (name: string) => /^[A-Za-z_$][\w$]*$/.test(name);
/** `object.name`, or `object["name"]` when the name is not an identifier. */
const access = (object: string, name: string) => (isIdentifier(name) ? `${object}.${name}` : `${object}[${JSON.stringify(name)}]`);
/** A method call on a property, `?.` when the property is optional. */
const callOn = (object: string, property: Property, method: string) =>
  `${access(object, property.name)}${property.required ? "." : "?."}${method}`;
const key = (name: string) => (isIdentifier(name) ? name : JSON.stringify(name));

interface Property {
  name: string;
  type: string | undefined;
  required: boolean;
}

function propertiesOf(schema: unknown): Property[] {
  if (typeof schema !== "object" || schema === null) return [];
  const { properties, required } = schema as Schema;
  const requiredNames = Array.isArray(required) ? required.filter((n): n is string => typeof n === "string") : [];
  return Object.entries(properties ?? {}).map(([name, property]) => ({
    name,
    type: typeof property?.type === "string" ? property.type : undefined,
    required: requiredNames.includes(name),
  }));
}

const describeArguments = (properties: Property[]) =>
  properties.length === 0
    ? "no declared properties"
    : properties.map((p) => `${p.name} (${p.type ?? "any"}${p.required ? "" : ", optional"})`).join(", ");

/** `text` as `// ` comment lines of at most 80 columns (a longer word keeps its own line). */
function comment(text: string): string {
  const lines: string[] = [];
  let line = "//";
  for (const word of text.split(/\s+/)) {
    if (line.length + 1 + word.length > 80 && line !== "//") {
      lines.push(line);
      line = "//";
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return lines.join("\n");
}

function wrap(tool: HookTool, intro: string, stages: string[]): string {
  const args = propertiesOf(tool.definition.inputSchema);
  return `${comment(intro)}
${comment(`Hook for ${tool.publicName}. Arguments: ${describeArguments(args)}.`)}
${comment("UpstreamArguments and UpstreamResult are this tool's own types, generated from its schemas.")}
type BeforeInput = Rayrun.BeforeInput<UpstreamArguments>;
type AfterInput = Rayrun.AfterInput<UpstreamArguments, UpstreamResult>;

export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
${stages.join("\n")}
});
`;
}

function rewriteStage(tool: HookTool): string {
  const text = propertiesOf(tool.definition.inputSchema).find((p) => p.type === "string");
  const body = text
    ? `    // Tidy the client's ${text.name} before it goes upstream.
    return {
      action: "continue",
      arguments: { ...args, ${key(text.name)}: ${callOn("args", text, "trim()")} },
    };`
    : `    // Change what goes upstream here.
    return { action: "continue", arguments: { ...args } };`;
  return `  ${BEFORE_SIGNATURE.replace("{ arguments: args, context }", "{ arguments: args }")} {
${body}
  },`;
}

const REJECT_STAGE = `  ${BEFORE_SIGNATURE} {
    // Refuse arguments over config.maxArgumentBytes (default 4,096) as JSON.
    const limit = Number(context.config.maxArgumentBytes ?? 4096);
    if (JSON.stringify(args).length > limit) {
      return {
        action: "reject",
        reason: "arguments_too_large",
        message: \`The arguments are over \${limit} bytes of JSON.\`,
      };
    }
    return { action: "continue", arguments: args };
  },`;

const APPROVAL_STAGE = `  ${BEFORE_SIGNATURE} {
    // Every call waits for a person's approval, unless config.approve is false.
    if (context.config.approve === false) {
      return { action: "continue", arguments: args };
    }
    return {
      action: "require_approval",
      arguments: args,
      reason: "needs_review",
      message: \`A person approves each call to \${context.toolName}.\`,
    };
  },`;

function trimStage(tool: HookTool): string {
  const limit = "    const limit = Number(context.config.limit ?? 3);";
  const output = tool.definition.outputSchema;
  const list = propertiesOf(output).find((p) => p.type === "array");
  const text = propertiesOf(output).find((p) => p.type === "string");
  const body = !output
    ? `    // No outputSchema: the result is the MCP CallToolResult.
    // Keep its first config.limit (default 3) content blocks.
${limit}
    return {
      action: "return",
      result: { ...result, content: result.content.slice(0, limit) },
    };`
    : list
      ? `    // Keep the first config.limit (default 3) of ${list.name}.
${limit}
    return {
      action: "return",
      result: { ...result, ${key(list.name)}: ${callOn("result", list, "slice(0, limit)")} },
    };`
      : text
        ? `    // Cut ${text.name} to config.maxLength (default 1,000) characters.
    const maxLength = Number(context.config.maxLength ?? 1000);
    return {
      action: "return",
      result: { ...result, ${key(text.name)}: ${callOn("result", text, "slice(0, maxLength)")} },
    };`
        : `    // The result has no list or text to trim: change it here.
    return { action: "return", result };`;
  return `  ${AFTER_SIGNATURE} {
${body}
  },`;
}

/** The source of a template for this tool. */
export function templateSource(tool: HookTool, id: TemplateId): string {
  switch (id) {
    case "skeleton":
      return wrap(tool, "Passes every call and result through unchanged: edit before, after, or both.", [PASS_BEFORE, PASS_AFTER]);
    case "rewrite":
      return wrap(tool, "Rewrites the arguments before the call goes upstream.", [rewriteStage(tool), PASS_AFTER]);
    case "reject":
      return wrap(tool, "Rejects calls with oversized arguments; the rest go through.", [REJECT_STAGE, PASS_AFTER]);
    case "approval":
      return wrap(tool, "Holds each call for a person's approval (Approvals), then runs it.", [APPROVAL_STAGE, PASS_AFTER]);
    case "trim":
      return wrap(tool, "Trims the result before the client gets it.", [PASS_BEFORE, trimStage(tool)]);
  }
}
