/** Size limits enforced by the compiler (bytes, UTF-8). Documented in docs/compiler.md. */
export const SOURCE_MAX_BYTES = 100 * 1024;
export const CONFIG_MAX_BYTES = 16 * 1024;
export const COMPILED_MAX_BYTES = 150 * 1024;
