import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { BOOTSTRAP_SECRET, ORIGIN } from "../../test/helpers.ts";
import { MAX_BODY_BYTES } from "./json-body.ts";

const CHUNK_BYTES = 64 * 1024;

/**
 * A body sent with `Transfer-Encoding: chunked` (a stream, no Content-Length):
 * `prefix`, then filler up to `totalBytes`, produced lazily so the test can see
 * how much of it the gateway pulled before answering.
 */
function chunkedBody(prefix: string, totalBytes: number): { body: ReadableStream<Uint8Array>; pulledBytes: () => number } {
  const encoder = new TextEncoder();
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= totalBytes) return controller.close();
      const chunk = pulled === 0 ? encoder.encode(prefix) : new Uint8Array(Math.min(CHUNK_BYTES, totalBytes - pulled)).fill(0x20);
      pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { body, pulledBytes: () => pulled };
}

async function createWorkspaceStreamed(body: ReadableStream<Uint8Array>): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/v1/workspaces`, {
    method: "POST",
    headers: { authorization: `Bearer ${BOOTSTRAP_SECRET}`, "content-type": "application/json" },
    body,
  });
}

describe("REST request bodies", () => {
  it("refuses a chunked body over 1 MiB with 413 payload_too_large, without reading the rest", async ({ expect }) => {
    const attack = chunkedBody('{"name":"big","padding":"', 64 * 1024 * 1024);
    const response = await createWorkspaceStreamed(attack.body);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: { code: "payload_too_large", message: `Request body exceeds ${MAX_BODY_BYTES} bytes` },
    });
    // Reading stopped at the bound (plus what the stream had already queued), far short of 64 MiB.
    expect(attack.pulledBytes()).toBeLessThan(MAX_BODY_BYTES + 4 * CHUNK_BYTES);
  });

  it("accepts a chunked body within 1 MiB and reads it once for the route", async ({ expect }) => {
    // 900 KiB of JSON whitespace after the object: valid JSON, under the bound.
    const response = await createWorkspaceStreamed(chunkedBody('{"name":"Streamed"}', 900 * 1024).body);
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ workspace: { name: "Streamed" } });
  });

  it("refuses a declared Content-Length over 1 MiB before reading", async ({ expect }) => {
    const response = await SELF.fetch(`${ORIGIN}/v1/workspaces`, {
      method: "POST",
      headers: { authorization: `Bearer ${BOOTSTRAP_SECRET}`, "content-type": "application/json" },
      body: `{"name":"${"x".repeat(MAX_BODY_BYTES)}"}`,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: "payload_too_large" } });
  });
});
