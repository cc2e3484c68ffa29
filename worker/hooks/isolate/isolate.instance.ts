import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import type { WasmReservation } from "../../lib/wasm-budget.ts";
import { captureImage, restoreImage, type MemoryImage } from "./isolate.image.ts";
import { BASE64_SOURCE, PRELUDE_SOURCE } from "./isolate.prelude.ts";

/** What the run being served answers for: interrupt polls and the prelude's host functions. */
export interface InstanceHost {
  /** True stops the guest with an uncatchable "interrupted". */
  onPoll(): boolean;
  charge(units: QuickJSHandle): QuickJSHandle;
  log(level: QuickJSHandle, messageJson: QuickJSHandle, dataJson: QuickJSHandle): QuickJSHandle;
  /** A Code Mode program's `tools.<name>(argsJson)` (see codemode.runtime.ts); a hook run never receives one. */
  programCall(name: QuickJSHandle, argsJson: QuickJSHandle): QuickJSHandle;
  /** A Code Mode program's console line. */
  programLine(line: QuickJSHandle): QuickJSHandle;
}

/** The two host functions a Code Mode runtime is given; only the host holds them, hook code never sees them. */
export interface ProgramFunctions {
  call: QuickJSHandle;
  line: QuickJSHandle;
}

/**
 * A QuickJS wasm instance holding one runtime and context with the prelude
 * installed, plus the memory image taken right after that setup. `reset()`
 * writes the image back, so every run starts from a byte-identical, newly
 * created runtime and context: nothing a run did (globals, prototypes, heap,
 * pending jobs, GC state) exists for the next one, and setup (about 1 ms of
 * runtime creation and prelude compilation) is paid once per instance
 * instead of once per run.
 *
 * Handles created during a run point into memory the next reset overwrites:
 * a run must dispose its own handles before it ends and keep none.
 */
export class IsolateInstance {
  /** The run this instance currently serves; polls and host calls outside a run stop the guest. */
  host: InstanceHost | undefined;
  private image: MemoryImage | undefined;

  private constructor(
    readonly module: QuickJSWASMModule,
    readonly runtime: QuickJSRuntime,
    readonly vm: QuickJSContext,
    /** The prelude's driver functions (begin, stageKind, invoke, describe, serialize, describeThrown). */
    readonly driver: QuickJSHandle,
    /**
     * Created once, before the image, and dispatched to the run being served: a function created per run would
     * keep a host reference for ever, since restoring the image never frees the guest object that holds it.
     */
    readonly programFunctions: ProgramFunctions,
    /** The instance's share of the isolate's wasm budget: its memory's hard maximum. */
    readonly reservation: WasmReservation,
  ) {}

  static create(module: QuickJSWASMModule, reservation: WasmReservation): IsolateInstance {
    const runtime = module.newRuntime();
    const vm = runtime.newContext();
    let instance: IsolateInstance | undefined;
    // Trusted setup runs with no host (`instance` is still unset) and is never interrupted.
    runtime.setInterruptHandler(() => (instance ? (instance.host?.onPoll() ?? true) : false));
    const charge = vm.newFunction("charge", (units) => instance?.host?.charge(units) ?? vm.true);
    const log = vm.newFunction("log", (level, message, data) => instance?.host?.log(level, message, data) ?? vm.true);
    const base64 = vm.newString(BASE64_SOURCE);
    const prelude = vm.unwrapResult(vm.evalCode(PRELUDE_SOURCE, "rayrun-prelude.js", { type: "global", strict: true }));
    const driver = vm.unwrapResult(vm.callFunction(prelude, vm.undefined, charge, log, base64));
    for (const handle of [prelude, charge, log, base64]) handle.dispose();
    const programFunctions = {
      call: vm.newFunction("callTool", (name, args) => instance?.host?.programCall(name, args) ?? vm.undefined),
      line: vm.newFunction("consoleLine", (line) => instance?.host?.programLine(line) ?? vm.undefined),
    };
    instance = new IsolateInstance(module, runtime, vm, driver, programFunctions, reservation);
    instance.image = captureImage(module.getWasmMemory());
    return instance;
  }

  /** Returns the instance to its pristine image. Call only between runs. */
  reset(): void {
    if (!this.image) throw new Error("isolate instance has no image");
    restoreImage(this.module.getWasmMemory(), this.image);
  }

  wasmBytes(): number {
    return this.module.getWasmMemory().buffer.byteLength;
  }

  /** No run will use the instance again: its share of the budget is given back (the memory goes with V8's next collection). */
  drop(): void {
    this.reservation.release();
  }
}
