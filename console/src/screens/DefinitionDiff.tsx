// The approved and the new definition of a tool side by side, line against line,
// removed lines marked on the left and added ones on the right (by sign and
// colour), long lines wrapped. jsdiff is loaded with the first review shown.
import { useLoad } from "../ui/load.ts";
import { json } from "../ui/format.ts";
import { ErrorNote, Loading } from "../ui/status.tsx";

type Line = { text: string; kind: "same" | "removed" | "added" | "blank" };

/** Pairs a diff's parts into rows: unchanged lines on both sides, a removal beside the addition that replaced it. */
export function alignLines(parts: { value: string; added?: boolean; removed?: boolean }[]): { left: Line[]; right: Line[] } {
  const left: Line[] = [];
  const right: Line[] = [];
  const linesOf = (value: string) => value.replace(/\n$/, "").split("\n");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!part.added && !part.removed) {
      for (const text of linesOf(part.value)) {
        left.push({ text, kind: "same" });
        right.push({ text, kind: "same" });
      }
      continue;
    }
    const removed = part.removed ? linesOf(part.value) : [];
    const next = parts[i + 1];
    const added = part.added ? linesOf(part.value) : next?.added ? linesOf(next.value) : [];
    if (part.removed && next?.added) i++;
    const rows = Math.max(removed.length, added.length);
    for (let row = 0; row < rows; row++) {
      left.push(row < removed.length ? { text: removed[row]!, kind: "removed" } : { text: "", kind: "blank" });
      right.push(row < added.length ? { text: added[row]!, kind: "added" } : { text: "", kind: "blank" });
    }
  }
  return { left, right };
}

const SIGN: Record<Line["kind"], string> = { same: "  ", removed: "- ", added: "+ ", blank: "  " };

function Side({ lines, label }: { lines: Line[]; label: string }) {
  return (
    <div>
      <h3>{label}</h3>
      <pre tabIndex={0} aria-label={label}>
        {lines.map((line, index) => (
          <span key={index} class={line.kind === "removed" ? "diff-removed" : line.kind === "added" ? "diff-added" : undefined}>
            {SIGN[line.kind]}
            {line.text}
            {"\n"}
          </span>
        ))}
      </pre>
    </div>
  );
}

export function DefinitionDiff({ previous, current }: { previous: unknown; current: unknown }) {
  const diff = useLoad(async () => {
    const { diffLines } = await import("diff");
    return alignLines(diffLines(previous === null ? "" : json(previous), json(current)));
  }, [previous, current]);
  if (diff.error) return <ErrorNote error={diff.error} />;
  if (!diff.data) return <Loading what="the comparison" />;
  return (
    <div class="definition-diff">
      <Side lines={diff.data.left} label="Approved definition" />
      <Side lines={diff.data.right} label="New definition" />
    </div>
  );
}
