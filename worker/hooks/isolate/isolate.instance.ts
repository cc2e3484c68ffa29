import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { WeightedLru } from "../../lib/lru.ts";
import type { WasmReservation } from "../../lib/wasm-budget.ts";
import { captureImage, clearAbove, imageBytes, restoreImage, type MemoryImage } from "./isolate.image.ts";
import { BASE64_SOURCE, PRELUDE_SOURCE } from "./isolate.prelude.ts";

/** What the run being served answers for: interrupt polls and the prelude's host functions. */
export interface InstanceHost {
  /** True stops the guest with an uncatchable "interrupted". */
  onPoll(): boolean;
  charge(units: QuickJSHandle): QuickJSHandle;
  /** The prelude refused a log entry (a cap): the run fails with `log_limit`, saying which. */
  logRefused(message: QuickJSHandle): QuickJSHandle;
  /** UTF-8 bytes of a log entry's data, for the one size its length cannot settle. */
  utf8Bytes(text: QuickJSHandle): QuickJSHandle;
  /** A Code Mode program's `tools.<name>(argsJson)` (see codemode.runtime.ts); a hook run never receives one. */
  programCall(name: QuickJSHandle, argsJson: QuickJSHandle): QuickJSHandle;
  /** A Code Mode program's console line. */
  programLine(line: QuickJSHandle): QuickJSHandle;
}

/** The prelude's driver functions, called by the host only. */
export const DRIVER_FUNCTIONS = ["begin", "readCallState", "takeLogs", "invoke", "describe", "serialize", "describeThrown"] as const;
export type DriverFunction = (typeof DRIVER_FUNCTIONS)[number];

/** The two host functions a Code Mode runtime is given; only the host holds them, hook code never sees them. */
export interface ProgramFunctions {
  call: QuickJSHandle;
  line: QuickJSHandle;
}

/**
 * A hook bundle evaluated from the pristine image, as memory, plus the work its top level took (charged to every run
 * that starts from it, so a hook's work budget is the same with or without the image).
 */
export interface BundleImage {
  readonly memory: MemoryImage;
  readonly polls: number;
  readonly chargedUnits: number;
}

/**
 * Bounds of one instance's bundle images. An image is about 0.4 MiB (statics plus the heap), held in the JavaScript
 * heap outside the wasm budget, so at most `maxEntries` of them and `maxBytes` in all (the bundle texts they are
 * keyed by counted too), the least recently used going first. Taking one costs about 5 ms (the free memory is
 * zeroed before the bundle is evaluated and scanned for its end after), so a bundle is imaged only once it has run
 * `afterRuns` times on the instance without one: an isolate whose hot hooks outnumber the images then pays at most
 * a fraction of that per run, instead of a capture per run.
 */
export const BUNDLE_IMAGES = Object.freeze({ maxEntries: 16, maxBytes: 8 * 1024 * 1024, afterRuns: 8 });

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
  /**
   * By bundle text: the same text always evaluates to the same state, whoever deployed it. A bundle whose top level
   * read the clock or Math.random, or failed, is `unimageable` and is evaluated by every run.
   */
  private readonly bundleImages = new WeightedLru<BundleImage | "unimageable">(BUNDLE_IMAGES.maxEntries, BUNDLE_IMAGES.maxBytes);
  /** Runs of bundles that have no image yet, by bundle text. */
  private readonly runsWithoutImage = new WeightedLru<number>(4 * BUNDLE_IMAGES.maxEntries, BUNDLE_IMAGES.maxBytes);

  private constructor(
    readonly module: QuickJSWASMModule,
    readonly runtime: QuickJSRuntime,
    readonly vm: QuickJSContext,
    /** The prelude's driver object, the `this` of its functions. */
    readonly driver: QuickJSHandle,
    /** Its functions, read once before the image, so a call does not look each one up again. */
    readonly driverFunctions: Readonly<Record<DriverFunction, QuickJSHandle>>,
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
    const logRefused = vm.newFunction("logRefused", (message) => instance?.host?.logRefused(message) ?? vm.undefined);
    // With no run to answer for, any size is too large.
    const utf8Bytes = vm.newFunction("utf8Bytes", (text) => instance?.host?.utf8Bytes(text) ?? vm.newNumber(Infinity));
    const base64 = vm.newString(BASE64_SOURCE);
    const prelude = vm.unwrapResult(vm.evalCode(PRELUDE_SOURCE, "rayrun-prelude.js", { type: "global", strict: true }));
    const driver = vm.unwrapResult(vm.callFunction(prelude, vm.undefined, charge, logRefused, utf8Bytes, base64));
    for (const handle of [prelude, charge, logRefused, utf8Bytes, base64]) handle.dispose();
    const driverFunctions = Object.fromEntries(DRIVER_FUNCTIONS.map((name) => [name, vm.getProp(driver, name)])) as Record<
      DriverFunction,
      QuickJSHandle
    >;
    const programFunctions = {
      call: vm.newFunction("callTool", (name, args) => instance?.host?.programCall(name, args) ?? vm.undefined),
      line: vm.newFunction("consoleLine", (line) => instance?.host?.programLine(line) ?? vm.undefined),
    };
    instance = new IsolateInstance(module, runtime, vm, driver, driverFunctions, programFunctions, reservation);
    instance.image = captureImage(module.getWasmMemory());
    return instance;
  }

  /** Returns the instance to its pristine image, or to a bundle image taken from it. Call only between runs. */
  reset(image?: BundleImage): void {
    if (!this.image) throw new Error("isolate instance has no image");
    restoreImage(this.module.getWasmMemory(), image?.memory ?? this.image);
  }

  /**
   * Zeroes the memory above the pristine image's heap, as in a fresh instance, so that a bundle image taken after
   * this holds only what evaluating the bundle wrote (its high-water mark is found by the first non-zero byte from
   * the top). Call right after `reset()`, before the bundle is evaluated: malloc never reads its free top chunk.
   */
  clearForImage(): void {
    if (!this.image) throw new Error("isolate instance has no image");
    clearAbove(this.module.getWasmMemory(), this.image);
  }

  /**
   * The image of `bundle`, `unimageable`, or `capture` when this run should take its image (it has run
   * `afterRuns` times without one), else undefined (this run evaluates it).
   */
  bundleImage(bundle: string): BundleImage | "unimageable" | "capture" | undefined {
    const image = this.bundleImages.get(bundle);
    if (image) return image;
    const runs = (this.runsWithoutImage.get(bundle) ?? 0) + 1;
    if (runs < BUNDLE_IMAGES.afterRuns) {
      this.runsWithoutImage.set(bundle, runs, bundle.length * 2);
      return undefined;
    }
    this.runsWithoutImage.delete(bundle);
    return "capture";
  }

  /** Keeps the instance's state as the image of `bundle`. Call only between guest steps (no live C frame). */
  keepBundleImage(bundle: string, work: { polls: number; chargedUnits: number }): void {
    const memory = captureImage(this.module.getWasmMemory());
    this.bundleImages.set(bundle, { memory, ...work }, imageBytes(memory) + bundle.length * 2);
  }

  /** Notes that `bundle` cannot be imaged: every run evaluates it. */
  keepUnimageable(bundle: string): void {
    this.bundleImages.set(bundle, "unimageable", bundle.length * 2);
  }

  wasmBytes(): number {
    return this.module.getWasmMemory().buffer.byteLength;
  }

  /** No run will use the instance again: its share of the budget is given back (the memory goes with V8's next collection). */
  drop(): void {
    this.reservation.release();
  }
}
