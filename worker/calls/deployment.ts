import type { HookStage, JsonObject } from "../../schema/hooks/contract.ts";
import type { PublicContract } from "../hooks/compiler/index.ts";
import type { DeploymentPointer, ToolDeployments } from "../hooks/lifecycle/deployments.do.ts";

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
 * Bundles are immutable (a revision never changes), so each isolate keeps the
 * ones it has read from R2. Bounded, because a workspace may deploy many.
 */
const MAX_CACHED_BUNDLES = 256;
const bundles = new Map<string, string>();

async function bundleFor(env: Env, key: string): Promise<string> {
  const cached = bundles.get(key);
  if (cached !== undefined) return cached;
  const object = await env.BUNDLES.get(key);
  if (!object) throw new Error(`deployed bundle ${key} is missing from R2`);
  const code = await object.text();
  if (bundles.size >= MAX_CACHED_BUNDLES) bundles.delete(bundles.keys().next().value!);
  bundles.set(key, code);
  return code;
}

/** A pointer with its bundle, ready to run. */
export async function withBundle(env: Env, pointer: DeploymentPointer | undefined): Promise<DeployedRevision | null> {
  if (!pointer) return null;
  return {
    revisionId: pointer.revisionId,
    bundle: await bundleFor(env, pointer.bundleKey),
    stages: pointer.stages,
    contract: pointer.contract,
    config: pointer.config,
    definitionHash: pointer.definitionHash,
  };
}
