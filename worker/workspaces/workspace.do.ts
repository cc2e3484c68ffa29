import { DurableObject } from "cloudflare:workers";

/**
 * One instance per workspace, addressed by workspace id. It is the single writer
 * for state that must not race: hook drafts and etags, deployment pointers, quota
 * counters, byte allowances and approvals (see schema/STORAGE.md).
 */
export class WorkspaceDO extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
  }

  async ping(): Promise<string> {
    return "pong";
  }
}
