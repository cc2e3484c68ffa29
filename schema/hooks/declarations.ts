/**
 * The `rayrun.hooks/v1` authoring contract as ambient TypeScript declarations:
 * what hook authors compile against in the console editor and with a local
 * `tsc`. The values (API version, reason pattern, message bounds, log levels)
 * come from contract.ts, the runtime's source of truth, so the two cannot drift.
 *
 * The text is a global script (no import/export). It refers to two types that
 * the per-tool file declares next to it: `UpstreamArguments` (what `before`
 * sends upstream) and `UpstreamResult` (what `after` receives). Pure: usable in
 * the Worker, the CLI, the console and Node scripts.
 */
import { HOOK_API_VERSION, HOOK_LOG_LEVELS, MESSAGE_MAX_LENGTH, MESSAGE_MIN_LENGTH, REASON_PATTERN_SOURCE } from "./contract.ts";

const logLevels = HOOK_LOG_LEVELS.map((level) => JSON.stringify(level)).join(" | ");

export const HOOK_DECLARATIONS = `/** Types of the Rayrun hook API ${HOOK_API_VERSION}. */
declare namespace Rayrun {
  type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
  type JsonObject = { [key: string]: JsonValue };

  /** A stable machine code matching \`${REASON_PATTERN_SOURCE}\`, e.g. "query_too_broad". */
  type Reason = string;
  /** Readable text, ${MESSAGE_MIN_LENGTH}–${MESSAGE_MAX_LENGTH} characters. */
  type Message = string;

  /**
   * What \`before\` returns: call upstream with these arguments, reject the call, or ask a human first.
   * An approval's \`message\` is shown to the approver beside its \`reason\`.
   */
  type BeforeReturn<Args = UpstreamArguments> =
    | { action: "continue"; arguments: Args }
    | { action: "reject"; reason: Reason; message: Message }
    | { action: "require_approval"; arguments: Args; reason: Reason; message?: Message };

  /** What \`after\` returns: the (transformed) result for the client, or a failure. */
  type AfterReturn<PublicResult = unknown> =
    | { action: "return"; result: PublicResult }
    | { action: "fail"; reason: Reason; message: Message };

  /** A stage may be async; its promise must settle without timers or I/O (there are none). */
  type Awaitable<T> = T | PromiseLike<T>;

  type LogLevel = ${logLevels};

  interface Context<Config extends JsonObject = JsonObject> {
    /** Fixed ISO-8601 time of the call; \`Date.now()\` and \`new Date()\` return it too. */
    readonly calledAt: string;
    /** Correlation id of the call. */
    readonly requestId: string;
    readonly workspaceUid: string;
    readonly connectionId: string;
    readonly toolUid: string;
    /** The tool's public name, \`{service}__{tool}\`: the name clients call, the same in tests and live. */
    readonly toolName: string;
    /** Frozen, non-secret JSON deployed with the revision. */
    readonly config: Readonly<Config>;
    readonly encoding: {
      /** UTF-8 encode, then base64 (standard alphabet, padded). */
      base64Encode(value: string): string;
      /** Base64 decode, then UTF-8 decode. Throws on invalid input. */
      base64Decode(value: string): string;
    };
    /** Log entries are bounded in count, message length and data size. */
    readonly log: { readonly [L in LogLevel]: (message: string, data?: JsonValue) => void };
  }

  interface BeforeInput<PublicArgs> {
    /** The client's arguments, already validated against the public input schema. */
    arguments: PublicArgs;
    context: Context;
  }

  interface AfterInput<PublicArgs, Result> {
    /** The upstream \`structuredContent\` when the tool has an outputSchema, else its whole CallToolResult. */
    result: Result;
    /** The client's arguments, as \`before\` received them. */
    arguments: PublicArgs;
    /** The arguments that went upstream: what \`before\` returned, or the client's when there is no \`before\`. */
    upstreamArguments: UpstreamArguments;
    context: Context;
  }

  /** A JSON Schema (2020-12) whose root accepts objects. \`pattern\` and \`patternProperties\` are rejected. */
  type ObjectSchema = { type: "object"; [keyword: string]: unknown };

  /** Replaces the upstream tool's description and schemas in discovery; fixed at compile time. */
  interface PublicContract {
    description?: string;
    inputSchema?: ObjectSchema;
    outputSchema?: ObjectSchema;
  }

  interface ToolAdapter<PublicArgs = UpstreamArguments, Result = UpstreamResult> {
    apiVersion: ${JSON.stringify(HOOK_API_VERSION)};
    publicContract?: PublicContract;
    before?(input: BeforeInput<PublicArgs>): Awaitable<BeforeReturn>;
    after?(input: AfterInput<PublicArgs, Result>): Awaitable<AfterReturn>;
  }

  /** The MCP CallToolResult: what \`after\` receives when the tool has no outputSchema. */
  interface CallToolResult {
    content: ContentBlock[];
    structuredContent?: { [key: string]: unknown };
    isError?: boolean;
    _meta?: { [key: string]: unknown };
  }

  type ContentBlock =
    | { type: "text"; text: string; annotations?: Annotations; _meta?: { [key: string]: unknown } }
    | { type: "image"; data: string; mimeType: string; annotations?: Annotations; _meta?: { [key: string]: unknown } }
    | { type: "audio"; data: string; mimeType: string; annotations?: Annotations; _meta?: { [key: string]: unknown } }
    | {
        type: "resource_link";
        uri: string;
        name: string;
        title?: string;
        description?: string;
        mimeType?: string;
        size?: number;
        annotations?: Annotations;
        _meta?: { [key: string]: unknown };
      }
    | {
        type: "resource";
        resource:
          | { uri: string; mimeType?: string; text: string; _meta?: { [key: string]: unknown } }
          | { uri: string; mimeType?: string; blob: string; _meta?: { [key: string]: unknown } };
        annotations?: Annotations;
        _meta?: { [key: string]: unknown };
      };

  interface Annotations {
    audience?: ("user" | "assistant")[];
    priority?: number;
    lastModified?: string;
  }
}

/**
 * Declares the tool adapter. The hook's only export: \`export default defineToolAdapter({ ... })\`.
 * \`PublicArgs\` is what clients send (the public input schema); \`Result\` is what \`after\` receives.
 */
declare function defineToolAdapter<PublicArgs = UpstreamArguments, Result = UpstreamResult>(
  adapter: Rayrun.ToolAdapter<PublicArgs, Result>,
): Rayrun.ToolAdapter<PublicArgs, Result>;
`;

/**
 * The complete `.d.ts` for one tool: a header, the tool's upstream types
 * (declaring `UpstreamArguments` and `UpstreamResult`), then the contract.
 */
export function assembleToolDeclarations(options: { toolName: string; upstreamDeclarations: string }): string {
  // Tool names come from upstream servers: keep them on the comment's line.
  const name = JSON.stringify(options.toolName).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  const header = `// Rayrun hook declarations (${HOOK_API_VERSION}) for tool ${name}.
// Generated from the tool's current upstream schemas; regenerate when they change.
`;
  return `${header}\n${options.upstreamDeclarations.trim()}\n\n${HOOK_DECLARATIONS}`;
}
