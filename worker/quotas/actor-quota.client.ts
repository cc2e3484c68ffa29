import type { HookActor, Outcome } from "../hooks/lifecycle/lifecycle.types.ts";

/** The typed way to an actor's ActorQuotaDO (see there why compile attempts are counted per actor). */
export function actorQuotas(env: Env, actor: Pick<HookActor, "id" | "kind">) {
  const stub = env.ACTOR_QUOTA.getByName(`${actor.kind}:${actor.id}`);
  return {
    chargeCompile: (): Promise<Outcome<{ used: number; limit: number }>> => stub.chargeCompile(actor.id),
    compileUsage: (): Promise<{ used: number; limit: number }> => stub.compileUsage(actor.id),
  };
}
