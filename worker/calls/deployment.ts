import type { HookStage, JsonObject } from "../../schema/hooks/contract.ts";
import type { PublicContract } from "../hooks/compiler/index.ts";
import type { DeploymentPointer, ToolDeployments } from "../hooks/lifecycle/deployments.do.ts";
import { WeightedLru } from "../lib/lru.ts";

export type { ToolDeployments };

/** A deployed revision, ready to run: its pointer plus the compiled bundle. */
export interface DeployedRevision {
  revisionId: string;
  bundle: string;
  stages: HookStage[];
  contract: PublicContract | null;
  config: JsonObject;
  /** The upstream definition hash the revision was compiled against. */
  definitionHash: string;
}

/**
 * Bundles are immutable (a revision never changes), so each isolate keeps the ones it has read from R2, the least
 * recently used going first past either bound: any workspace may deploy many, each up to 150 KiB.
 */
export class BundleCache {
  readonly #bundles: WeightedLru<string>;

  constructor(
    readonly maxBundles: number,
    readonly maxChars: number,
  ) {
    this.#bundles = new WeightedLru(maxBundles, maxChars);
  }

  get size(): number {
    return this.#bundles.size;
  }

  /** Characters held. */
  get chars(): number {
    return this.#bundles.weight;
  }

  async read(env: Env, key: string): Promise<string> {
    const cached = this.#bundles.get(key);
    if (cached !== undefined) return cached;
    const object = await env.BUNDLES.get(key);
    if (!object) throw new Error(`deployed bundle ${key} is missing from R2`);
    const code = await object.text();
    this.#bundles.set(key, code, code.length);
    return code;
  }
}

/** 256 bundles, 16 Mi characters: a workspace's whole allowance of active and shadow bundles fits. */
export const isolateBundles = new BundleCache(256, 16 * 1024 * 1024);

/** A pointer with its bundle, ready to run. */
export async function withBundle(env: Env, pointer: DeploymentPointer | undefined): Promise<DeployedRevision | null> {
  if (!pointer) return null;
  return {
    revisionId: pointer.revisionId,
    bundle: await isolateBundles.read(env, pointer.bundleKey),
    stages: pointer.stages,
    contract: pointer.contract,
    config: pointer.config,
    definitionHash: pointer.definitionHash,
  };
}
