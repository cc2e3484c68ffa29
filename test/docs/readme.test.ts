// The README stays a front page, and its "Try it" commands work as written: the curl call and the MCP SDK
// client run unchanged against a real gateway under `wrangler dev`, reading the same
// `.rayrun/dev-credentials.json` that `npm start` writes (only the port differs from the README's 8787).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Lexer, type Tokens } from "marked";
import { afterAll, beforeAll, describe, it } from "vitest";
import { request, seedWorkspace, startGateway, type RunningGateway } from "../node/gateway.ts";

const root = join(import.meta.dirname, "../..");
// Asynchronous, never execFileSync: the demo upstream answers from this same process.
const run = promisify(execFile);
const readme = readFileSync(join(root, "README.md"), "utf8");

/** The fenced code blocks of the README's "Try it" section, in order. */
function tryItBlocks(): Tokens.Code[] {
  const tokens = Lexer.lex(readme);
  const start = tokens.findIndex((token) => token.type === "heading" && token.depth === 2 && token.text === "Try it");
  const end = tokens.findIndex((token, index) => index > start && token.type === "heading" && token.depth === 2);
  return tokens.slice(start, end).filter((token): token is Tokens.Code => token.type === "code");
}

describe("README.md", () => {
  it("is a front page of at most about 250 lines", ({ expect }) => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(260);
  });

  describe("Try it, against a running gateway", () => {
    let gateway: RunningGateway;
    let folder: string;

    beforeAll(async () => {
      gateway = await startGateway();
      const seeded = await seedWorkspace(gateway, "readme try it");
      const client = await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/keys`, seeded.adminKey, {
        name: "readme agent",
        scopes: ["tools:call"],
        profileId: seeded.defaultProfileId,
      });
      // Inside the checkout (git-ignored), so the snippet's imports resolve from the project's node_modules.
      mkdirSync(join(root, ".rayrun"), { recursive: true });
      folder = mkdtempSync(join(root, ".rayrun", "readme-"));
      mkdirSync(join(folder, ".rayrun"));
      writeFileSync(
        join(folder, ".rayrun/dev-credentials.json"),
        JSON.stringify({
          workspace: seeded.ws,
          adminKey: seeded.adminKey,
          clientKey: client.secret,
          apiUrl: gateway.origin,
          mcpUrl: `${gateway.origin}/mcp`,
        }),
      );
    });

    afterAll(async () => {
      rmSync(folder, { recursive: true, force: true });
      await gateway?.stop();
    });

    it("the curl call returns the demo tool's result", async ({ expect }) => {
      const curl = tryItBlocks().find((block) => block.lang === "sh" && block.text.includes("curl"));
      expect(curl).toBeDefined();
      const port = new URL(gateway.origin).port;
      const script = curl!.text.replaceAll("127.0.0.1:8787", `127.0.0.1:${port}`);
      const { stdout: output } = await run("bash", ["-euo", "pipefail", "-c", script], { cwd: folder, encoding: "utf8" });
      const answer = JSON.parse(output) as { result: { isError?: boolean; content: { type: string; text: string }[] } };
      expect(answer.result.isError, output).toBeUndefined();
      expect(answer.result.content[0]?.text).toMatch(/sso/i);
    });

    it("the MCP SDK client lists the tools and calls one", async ({ expect }) => {
      const sdk = tryItBlocks().find((block) => block.lang === "js" && block.text.includes("@modelcontextprotocol/sdk"));
      expect(sdk).toBeDefined();
      writeFileSync(join(folder, "try.mjs"), sdk!.text);
      const { stdout: output } = await run(process.execPath, ["try.mjs"], { cwd: folder, encoding: "utf8" });
      expect(output).toContain("demo__search_release_notes");
      expect(output).toMatch(/content: \[/);
      expect(output).not.toMatch(/isError: true/);
    });
  });
});
