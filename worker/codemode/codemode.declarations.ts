/**
 * The TypeScript a Code Mode agent writes against: one `tools` object with an
 * async function per tool its profile may call, typed from each tool's public
 * definition (the hook's `publicContract` where it replaces the upstream's),
 * by the same schema converter as the hook editor's declarations.
 *
 * Kept free of Worker-only imports so Node can run it (test/tsc/typecheck.mjs).
 */
import { DeclarationsTooLargeError, schemaToDeclarations, schemaToType } from "../hooks/compiler/compiler.types.ts";

/** A tool as discovery shows it: public name, description and schemas (what `tools/list` lists). */
export interface DeclaredTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
}

/** The most text one `describe_tools` answer may hold (UTF-16 code units); a filter narrows a larger catalog. */
export const CODE_DECLARATIONS_MAX_CHARS = 1024 * 1024;

const PREAMBLE = `/**
 * The tools this client may call from run_code (Rayrun Code Mode). Each call goes through the gateway like a
 * direct one: access policy, the tool's hook, approvals, one upstream call. A refusal or failure rejects with a
 * ToolError carrying the same stable code and details as a direct call's isError result.
 */
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A refused or failed tool call; catch it to go on. */
interface ToolError extends Error {
  name: "ToolError";
  /** Stable code: a gateway refusal (e.g. "approval_required", "invalid_arguments"), a hook's reason, "unknown_tool" or "upstream_error". */
  code: string;
  /** As on the direct call's isError result, e.g. \`approvalId\` for "approval_required". */
  details?: { [key: string]: unknown };
}

/** What a tool without an output schema resolves to: its MCP result content. */
interface ToolContentResult {
  content: ({ type: "text"; text: string } | { type: string; [key: string]: unknown })[];
  structuredContent?: { [key: string]: unknown };
}

/** Lines the run returns next to its result; values that are not strings are written as JSON. */
declare const console: { log(...values: unknown[]): void };
`;

/**
 * Declarations for `tools`, in the order given. Each tool gets an arguments
 * type from its input schema and a result type from its output schema (else
 * `ToolContentResult`). Throws `DeclarationsTooLargeError` past
 * `CODE_DECLARATIONS_MAX_CHARS`.
 */
export function generateCodeDeclarations(tools: readonly DeclaredTool[]): string {
  let budget = CODE_DECLARATIONS_MAX_CHARS - PREAMBLE.length;
  const usedNames = new Set<string>();
  const types: string[] = [];
  const members: string[] = [];
  for (const tool of tools) {
    const base = uniqueName(typeNamePart(tool.name), usedNames);
    const typeOf = (schema: Record<string, unknown>, name: string) => {
      // A schema without references is written in place: fewer bytes for the agent to read.
      if (!hasReferences(schema)) return schemaToType(schema);
      const declaration = schemaToDeclarations(schema, name, budget);
      budget -= declaration.length;
      types.push(declaration);
      return name;
    };
    const argsType = typeOf(tool.inputSchema, `${base}_Arguments`);
    const resultType = tool.outputSchema ? typeOf(tool.outputSchema, `${base}_Result`) : "ToolContentResult";
    const member = `${jsDoc(tool.description, "  ")}  ${propertyKey(tool.name)}(args: ${indented(argsType)}): Promise<${indented(resultType)}>;`;
    budget -= member.length;
    if (budget < 0) throw new DeclarationsTooLargeError("the generated declarations are over the size limit");
    members.push(member);
  }
  const toolsDeclaration = members.length ? `declare const tools: {\n${members.join("\n")}\n};\n` : "declare const tools: {};\n";
  return [PREAMBLE, ...types.map((type) => `${type}\n`), toolsDeclaration].join("\n");
}

/** Whether the schema uses `$ref`, `$defs` or `definitions` anywhere: its types then need names. */
function hasReferences(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasReferences);
  if (typeof schema !== "object" || schema === null) return false;
  return Object.entries(schema).some(([key, value]) => key === "$ref" || key === "$defs" || key === "definitions" || hasReferences(value));
}

/** A type written inside the `tools` block: its continuation lines one level deeper. */
const indented = (type: string) => type.replaceAll("\n", "\n  ");

function uniqueName(base: string, used: Set<string>): string {
  let name = base;
  while (used.has(name)) name += "_";
  used.add(name);
  return name;
}

/** A public name as part of a type name: identifier characters only, never a leading digit. */
function typeNamePart(name: string): string {
  const cleaned = name.replace(/[^\w$]/g, "_");
  return /^\d/.test(cleaned) ? `_${cleaned}` : cleaned || "_";
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** The description as a JSDoc block; "" without one. A description cannot close the comment early. */
function jsDoc(description: string | undefined, pad: string): string {
  const text = description?.trim();
  if (!text) return "";
  const lines = text.split(/\r?\n/).map((line) => line.replaceAll("*/", "*\\/"));
  if (lines.length === 1) return `${pad}/** ${lines[0]} */\n`;
  return `${pad}/**\n${lines.map((line) => `${pad} * ${line}`.trimEnd()).join("\n")}\n${pad} */\n`;
}
