/**
 * The `_meta` namespace of the gateway's own signals; nothing from an upstream or a hook may use it. It sits
 * below both the call path and the upstream client, which each strip or set keys in it.
 */
export const GATEWAY_META_PREFIX = "dev.rayrun/";
