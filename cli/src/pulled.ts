// Which draft each `hooks pull` saw, so `hooks push` can refuse to overwrite a
// newer one: `.rayrun/pulled.json` in the working directory, keyed by API URL,
// workspace and tool. It holds etags only, never a key.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const file = () => join(process.cwd(), ".rayrun", "pulled.json");
const keyOf = (baseUrl: string, workspace: string, toolUid: string) => `${baseUrl}|${workspace}|${toolUid}`;

function readAll(): Record<string, string> {
  if (!existsSync(file())) return {};
  try {
    return JSON.parse(readFileSync(file(), "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}

export function pulledEtag(baseUrl: string, workspace: string, toolUid: string): string | undefined {
  return readAll()[keyOf(baseUrl, workspace, toolUid)];
}

export function rememberPulled(baseUrl: string, workspace: string, toolUid: string, etag: string): void {
  const all = readAll();
  all[keyOf(baseUrl, workspace, toolUid)] = etag;
  mkdirSync(dirname(file()), { recursive: true });
  writeFileSync(file(), `${JSON.stringify(all, null, 2)}\n`);
}
