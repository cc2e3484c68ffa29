// The files of one `rayrun hooks run` session, `.rayrun/hooks/<session id>/`: the run's key,
// what rules found in the agent's tool calls (possibly private data), hook errors, counters.
// They are the owner's alone (folder 0700, files 0600), and the session's processes (Claude
// Code runs the hooks of parallel tool calls at once) change them in turn, under one lock.
import { randomBytes } from "node:crypto";
import { appendFile, chmod, lstat, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Stats } from "node:fs";

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
/** Permission bits that let anyone but the owner in. */
const OTHERS = 0o077;
/** A lock older than this was left by a killed process (holding it takes milliseconds). */
const STALE_LOCK_MS = 10_000;
const LOCK_RETRY_MS = 5;

/** The session folder, or something in it, cannot be made the owner's alone: `hooks run` refuses to use it. */
export class RunFilesError extends Error {
  readonly code = "run_state_unsafe";
}

/**
 * Makes the session folder (0700), or tightens one an older rayrun (or anything else) left open
 * to others: the folder to 0700, each file in it to 0600. A symlink, a non-regular file, or an
 * entry of another user is refused rather than written through.
 */
export async function prepareRunDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  // The folder first: once it is 0700 nobody else can add or swap what is in it.
  await tighten(dir, await lstat(dir), "directory");
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const info = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      // A counts temp file renamed away by a parallel process meanwhile.
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (info) await tighten(path, info, "file");
  }
}

/** A folder of the user's own rayrun state (0700, made with its parents): refused when it is a symlink or another user's. */
export async function prepareStateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  await tighten(dir, await lstat(dir), "directory");
}

async function tighten(path: string, info: Stats, kind: "directory" | "file"): Promise<void> {
  if (kind === "directory" ? !info.isDirectory() : !info.isFile())
    throw new RunFilesError(`${path} is not a ${kind === "directory" ? "directory" : "regular file"} (a symlink is never followed)`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw new RunFilesError(`${path} belongs to another user`);
  if ((info.mode & OTHERS) === 0) return;
  try {
    await chmod(path, kind === "directory" ? DIR_MODE : FILE_MODE);
  } catch (error) {
    throw new RunFilesError(`${path} is readable by others and cannot be made owner-only: ${(error as Error).message}`);
  }
}

/**
 * Runs `work` holding the session's lock: parallel hook processes of one session take turns on
 * its files, so no line or count is lost or interleaved. The one lock of a session.
 */
export async function withSessionLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const lock = join(dir, "session.lock");
  for (;;) {
    try {
      await (await open(lock, "wx", FILE_MODE)).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const since = await stat(lock).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (since > STALE_LOCK_MS) await rm(lock, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

/** The rows of a JSON-lines file of the session; none when it does not exist yet. Read under the lock. */
export async function readLines<T>(path: string): Promise<T[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  // A damaged line is not skipped, and the file not read as empty: what the session found so far would be
  // lost without a word. It fails the event instead (hooks run refuses a PreToolUse call then).
  return text
    .split("\n")
    .filter(Boolean)
    .map((line, index) => {
      try {
        return JSON.parse(line) as T;
      } catch {
        throw new Error(`${path}: line ${index + 1} is not JSON; the session's record is damaged`);
      }
    });
}

/** Appends rows as JSON lines, creating the file 0600. Call it under the lock. */
export async function appendLines(path: string, rows: readonly unknown[]): Promise<void> {
  if (rows.length) await appendFile(path, rows.map((row) => `${JSON.stringify(row)}\n`).join(""), { mode: FILE_MODE });
}

/** Replaces a file whole and 0600 (a temp file renamed over it), whatever mode the old one had. */
export async function replaceFile(path: string, text: string): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(temporary, text, { flag: "wx", mode: FILE_MODE });
  await rename(temporary, path);
}
