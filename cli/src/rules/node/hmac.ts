import { createHmac } from "node:crypto";
import type { HmacSha256 } from "../core/alias/derive.ts";

/** `node:crypto`'s HMAC-SHA-256: synchronous, where Node's Web Crypto queues a thread-pool job per signature. */
export const nodeHmacSha256: HmacSha256 = (key, message) => createHmac("sha256", key).update(message).digest();
