/** Size limits enforced by the compiler (bytes, UTF-8). Documented in docs/compiler.md. */
export const SOURCE_MAX_BYTES = 100 * 1024;
export const CONFIG_MAX_BYTES = 16 * 1024;
export const COMPILED_MAX_BYTES = 150 * 1024;

/**
 * Shape limits checked on the text before esbuild parses it (compiler.shape.ts).
 * Real hooks stay far below them; esbuild's stack gives out at a few thousand.
 */
export const COMPILE_SHAPE = { nesting: 64, expressionTokens: 2000 } as const;

/**
 * Prettier is synchronous and cannot be interrupted, so drafts are formatted
 * only below these bounds (else stored as written). Its time grows about 2.3×
 * per arrow passed as the last argument of a nested call: 14 levels take
 * 50 ms, 20 levels 6.5 s.
 */
export const FORMAT_MAX_BYTES = 32 * 1024;
export const FORMAT_SHAPE = { nesting: 64, arrowNesting: 12, expressionTokens: 2000 } as const;

/** A call into esbuild that has not answered by then is a hung service: it is replaced. */
export const ESBUILD_CALL_TIMEOUT_MS = 10_000;

/**
 * esbuild's wasm memory a service may keep after a call; past it the service is replaced. A fresh one holds
 * 8.5 MiB, and one call of 100 KiB grows it by at most 4.3 MiB (measured), so from here no call takes it past its
 * 16 MiB share of the isolate's wasm budget (lib/wasm-budget.ts).
 */
export const ESBUILD_RETAIN_BYTES = 11 * 1024 * 1024;
