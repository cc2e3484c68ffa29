import type { HookStage, JsonObject } from "../../schema/hooks/contract.ts";
import type { PublicContract } from "../hooks/compiler/index.ts";
import type { DeploymentPointer, ToolDeployments } from "../hooks/lifecycle/deployments.do.ts";

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

export interface ToolDeployment {
  active: DeployedRevision | null;
  shadow: DeployedRevision | null;
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

async function deployed(env: Env, pointer: DeploymentPointer | undefined): Promise<DeployedRevision | null> {
  if (!pointer) return null;
  return {
    revisionId: pointer.revisionId,
    bundle: await bundleFor(env, pointer.bundleKey),
    stages: pointer.stages,
    contract: pointer.contract,
    config: pointer.config as JsonObject,
    definitionHash: pointer.definitionHash,
  };
}

/** The tool's active and shadow revisions, read fresh from the workspace Durable Object. */
export async function loadDeployment(env: Env, workspaceId: string, toolUid: string): Promise<ToolDeployment> {
  // RPC typing maps open JSON (`unknown`) fields to `never`; the values are plain structured-clone data.
  const pointers = (await env.WORKSPACE.getByName(workspaceId).toolDeployments(toolUid)) as unknown as ToolDeployments;
  const [active, shadow] = await Promise.all([deployed(env, pointers.active), deployed(env, pointers.shadow)]);
  return { active, shadow };
}

export interface DeploymentSummary {
  /** Active revisions' public contracts, for discovery. */
  contracts: Map<string, PublicContract>;
  /** Tools with any pointer: only these need a fresh deployment read on each call. */
  hooked: Set<string>;
}

export async function summariseDeployments(env: Env, workspaceId: string): Promise<DeploymentSummary> {
  const all = (await env.WORKSPACE.getByName(workspaceId).allToolDeployments()) as unknown as Record<string, ToolDeployments>;
  const summary: DeploymentSummary = { contracts: new Map(), hooked: new Set() };
  for (const [toolUid, pointers] of Object.entries(all)) {
    if (pointers.active || pointers.shadow) summary.hooked.add(toolUid);
    if (pointers.active?.contract) summary.contracts.set(toolUid, pointers.active.contract);
  }
  return summary;
}
