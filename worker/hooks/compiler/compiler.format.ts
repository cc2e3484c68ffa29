import { SOURCE_MAX_BYTES } from "./compiler.limits.ts";

/**
 * Prettier's standalone build with its TypeScript parser, loaded on first use:
 * about 1.2 MB of JavaScript that only draft saves need, so the Worker does
 * not evaluate it at startup.
 */
let prettier: Promise<{ format: (source: string) => Promise<string> }> | undefined;

function loadPrettier() {
  prettier ??= Promise.all([import("prettier/standalone"), import("prettier/plugins/typescript"), import("prettier/plugins/estree")]).then(
    ([standalone, typescript, estree]) => ({
      format: (source: string) => standalone.format(source, { parser: "typescript", plugins: [typescript, estree] }),
    }),
    (error: unknown) => {
      prettier = undefined;
      throw error;
    },
  );
  return prettier;
}

/**
 * Formats hook source for storage as a draft. A draft that does not parse
 * (work in progress), is over the source limit, or is too deeply nested for
 * the parser is returned unchanged: saving must never fail because of formatting.
 */
export async function formatHookSource(source: string): Promise<string> {
  if (source.length > SOURCE_MAX_BYTES) return source;
  const { format } = await loadPrettier();
  try {
    return await format(source);
  } catch {
    // Syntax errors and parser stack overflows alike: keep the author's text.
    return source;
  }
}
