import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

/** Where the QuickJS wasm build puts its static data and its stack, read from the wasm file itself. */
export interface QuickJSLayout {
  /** One past the last byte of any active data segment (bss follows it, then the stack). */
  dataEnd: number;
  /** Initial value of the only mutable global, `__stack_pointer`: the stack's top and the heap's base. */
  stackPointer: number;
  /** How many mutable globals the module defines (state outside linear memory). */
  mutableGlobals: number;
}

/** Parses the global and data sections of the release-sync QuickJS wasm file. */
export async function readQuickJSLayout(): Promise<QuickJSLayout> {
  const require = createRequire(import.meta.url);
  const path = require.resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
  const bytes = new Uint8Array(await readFile(path));
  let at = 8;
  const u32 = (): number => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  /** A constant expression that is a single `i32.const`; returns its (non-negative) value. */
  const i32Const = (): number => {
    if (bytes[at++] !== 0x41) throw new Error("expected i32.const");
    const value = u32();
    if (bytes[at++] !== 0x0b) throw new Error("expected end of constant expression");
    return value;
  };
  const layout: QuickJSLayout = { dataEnd: 0, stackPointer: -1, mutableGlobals: 0 };
  while (at < bytes.length) {
    const section = bytes[at++];
    const size = u32();
    const end = at + size;
    if (section === 6) {
      for (let count = u32(); count > 0; count--) {
        at++; // value type
        const mutable = bytes[at++] === 1;
        const value = i32Const();
        if (mutable) {
          layout.mutableGlobals++;
          layout.stackPointer = value;
        }
      }
    } else if (section === 11) {
      for (let count = u32(); count > 0; count--) {
        if (u32() !== 0) throw new Error("only active data segments in memory 0 are expected");
        const offset = i32Const();
        const length = u32();
        layout.dataEnd = Math.max(layout.dataEnd, offset + length);
        at += length;
      }
    }
    at = end;
  }
  return layout;
}
