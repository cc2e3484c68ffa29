/** "26–50 of 200", with previous and next; the API's cursor is the offset of the page's first row. */
export function Pager(props: {
  pageSize: number;
  total: number;
  shown: number;
  start: number;
  nextCursor: string | null;
  onPage: (cursor: string | undefined) => void;
}) {
  const { pageSize, total, shown, start, nextCursor, onPage } = props;
  const previous = Math.max(0, start - pageSize);
  return (
    <nav class="pager" aria-label="Pages">
      <span role="status">
        {shown === 0 ? "None" : `${start + 1}–${start + shown}`} of {total}
      </span>
      <button type="button" class="secondary" disabled={start === 0} onClick={() => onPage(previous === 0 ? undefined : String(previous))}>
        Previous page
      </button>
      <button type="button" class="secondary" disabled={!nextCursor} onClick={() => onPage(nextCursor ?? undefined)}>
        Next page
      </button>
    </nav>
  );
}
