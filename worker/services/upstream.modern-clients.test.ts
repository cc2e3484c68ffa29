import { describe, it } from "vitest";
import { newTag, upstreamOrigin } from "../../test/helpers.ts";
import { keptModernClients, MAX_MODERN_CLIENTS, sharedModernClient } from "./upstream.modern.ts";

/**
 * Round-5 finding 3: the 2026-07-28 clients an isolate keeps. A target's cache key changes with each change of a
 * service's URL or headers (and per OAuth grant subject), so a tenant that rotates its headers decides how many
 * there are; every key used to keep a client for the isolate's lifetime.
 */
describe("round-5 finding 3: 2026-07-28 upstream clients one isolate keeps", () => {
  it("keeps at most MAX_MODERN_CLIENTS, the least recently used going first, and still reuses the one in use", async ({ expect }) => {
    const url = `${upstreamOrigin()}/fixtures/modern/${newTag()}/mcp`;
    const target = (key: string) => ({
      cacheKey: key,
      url,
      headers: {},
      allowList: new Set(["127.0.0.1"]),
      discover: { supportedVersions: ["2026-07-28"], capabilities: { tools: {} } },
    });
    const tag = newTag();
    const first = await sharedModernClient(target(`${tag}:hot`));
    // Connecting from a stored discover result costs no round trip, so this is cheap: one client per header rotation.
    for (let i = 0; i < MAX_MODERN_CLIENTS * 2; i++) {
      await sharedModernClient(target(`${tag}:rotated-${i}`));
      if (i % 16 === 0) expect(await sharedModernClient(target(`${tag}:hot`))).toBe(first);
    }
    expect(keptModernClients()).toBeLessThanOrEqual(MAX_MODERN_CLIENTS);
    // The one in steady use was never let go.
    expect(await sharedModernClient(target(`${tag}:hot`))).toBe(first);
  });
});
