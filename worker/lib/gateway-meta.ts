/**
 * The `_meta` namespace of the gateway's own signals; nothing from an upstream or a hook may use it. It sits
 * below both the call path and the upstream client, which each strip or set keys in it.
 */
export const GATEWAY_META_PREFIX = "dev.rayrun/";

/**
 * The members a 2026-07-28 result reserves for the protocol layer: the gateway's own input-required rounds and the
 * state it signs for them. An upstream's or a hook's result carrying them would reach a 2026-07-28 client as the
 * gateway's round (a URL to open posing as its approval, a form to fill), so they are dropped, and a result that
 * carries them never passes through as the upstream's bytes.
 */
export const PROTOCOL_RESULT_MEMBERS = ["resultType", "inputRequests", "requestState"] as const;

/** The result without the members PROTOCOL_RESULT_MEMBERS names (the same object when it has none). */
export function withoutProtocolMembers<R extends object>(result: R): R {
  if (!PROTOCOL_RESULT_MEMBERS.some((name) => name in result)) return result;
  const kept: Record<string, unknown> = { ...(result as Record<string, unknown>) };
  for (const name of PROTOCOL_RESULT_MEMBERS) delete kept[name];
  return kept as R;
}
