import { createTwoFilesPatch } from "diff";

/**
 * Myers' diff costs time proportional to the lines times the differences and
 * runs synchronously: past this many differing lines it stops (the `diff`
 * package's `maxEditLength`; its `timeout` cannot work in Workers, whose clock
 * stands still while code runs) and the route offers both texts instead. At
 * this bound the worst pair of 100 KiB versions costs about 45 ms once.
 */
export const DIFF_MAX_EDIT_LINES = 400;

export interface VersionTexts {
  source: string;
  /** The config as indented JSON. */
  config: string;
}

export type VersionDiff = { tooLarge: false; source: string; config: string } | { tooLarge: true };

/**
 * A lower bound on the lines Myers' diff would have to insert or delete: the
 * lines of each text that the other lacks, counted as multisets. Computed in
 * one linear pass, it refuses two unrelated versions before any diffing.
 */
export function minimumEditLines(before: string, after: string): number {
  const balance = new Map<string, number>();
  for (const line of before.split("\n")) balance.set(line, (balance.get(line) ?? 0) + 1);
  for (const line of after.split("\n")) balance.set(line, (balance.get(line) ?? 0) - 1);
  let edits = 0;
  for (const count of balance.values()) edits += Math.abs(count);
  return edits;
}

function boundedPatch(from: string, to: string, before: string, after: string): string | undefined {
  if (minimumEditLines(before, after) > DIFF_MAX_EDIT_LINES) return undefined;
  return createTwoFilesPatch(from, to, before, after, undefined, undefined, { maxEditLength: DIFF_MAX_EDIT_LINES });
}

/**
 * Versions are immutable, so a pair's diff never changes: the last few are kept
 * in this isolate, and asking again for the same costly diff costs nothing.
 */
const recent = new Map<string, VersionDiff>();
const RECENT_DIFFS = 16;

/** Unified diffs of source and config between two versions, or `tooLarge` past the edit bound. */
export function diffVersions(
  cacheKey: string,
  names: { from: string; to: string },
  previous: VersionTexts,
  current: VersionTexts,
): VersionDiff {
  const cached = recent.get(cacheKey);
  if (cached) return cached;
  const source = boundedPatch(`${names.from}/hook.ts`, `${names.to}/hook.ts`, previous.source, current.source);
  const config =
    source === undefined
      ? undefined
      : boundedPatch(`${names.from}/config.json`, `${names.to}/config.json`, previous.config, current.config);
  const diff: VersionDiff = source === undefined || config === undefined ? { tooLarge: true } : { tooLarge: false, source, config };
  recent.set(cacheKey, diff);
  if (recent.size > RECENT_DIFFS) recent.delete(recent.keys().next().value!);
  return diff;
}
