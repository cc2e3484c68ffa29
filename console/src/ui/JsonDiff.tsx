import { diffJson } from "diff";

/**
 * A line diff of two JSON values (keys in a stable order), for comparing what active and shadow decided: lines only
 * active had are marked −, lines only shadow had +.
 */
export function JsonDiff({ before, after, label }: { before: unknown; after: unknown; label: string }) {
  const parts = diffJson(before as object, after as object);
  return (
    <pre class="json-diff" tabIndex={0} aria-label={label}>
      {parts.flatMap((part, index) =>
        part.value
          .replace(/\n$/, "")
          .split("\n")
          .map((line, at) => (
            <span key={`${index}-${at}`} class={part.added ? "added" : part.removed ? "removed" : undefined}>
              {part.added ? "+ " : part.removed ? "− " : "  "}
              {line}
              {"\n"}
            </span>
          )),
      )}
    </pre>
  );
}
