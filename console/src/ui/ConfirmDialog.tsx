// A modal confirmation that says exactly what will change. The native <dialog>
// traps focus, closes on Escape and returns focus to the opener. With
// `typeToConfirm`, the confirm button stays disabled until that text is typed.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

export interface ConfirmRequest {
  title: string;
  body: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  typeToConfirm?: string;
  run: () => Promise<void>;
}

export function ConfirmDialog({ request, onClose }: { request: ConfirmRequest | undefined; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const element = dialog.current!;
    if (request && !element.open) {
      setTyped("");
      element.showModal();
    }
    if (!request && element.open) element.close();
  }, [request]);

  const confirmed = !request?.typeToConfirm || typed === request.typeToConfirm;
  const confirm = async () => {
    if (!request || !confirmed) return;
    setBusy(true);
    try {
      await request.run();
    } finally {
      setBusy(false);
      onClose();
    }
  };

  return (
    <dialog ref={dialog} class="confirm" aria-labelledby="confirm-title" onClose={onClose}>
      {request && (
        <form
          method="dialog"
          onSubmit={(e) => {
            e.preventDefault();
            void confirm();
          }}
        >
          <h3 id="confirm-title">{request.title}</h3>
          <div class="confirm-body">{request.body}</div>
          {request.typeToConfirm && (
            <label class="block">
              Type <code>{request.typeToConfirm}</code> to confirm
              <input value={typed} autoComplete="off" spellcheck={false} onInput={(e) => setTyped(e.currentTarget.value)} />
            </label>
          )}
          <div class="actions">
            <button type="submit" class={request.danger ? "danger" : undefined} disabled={!confirmed || busy}>
              {busy ? "Working…" : request.confirmLabel}
            </button>
            <button type="button" class="secondary" onClick={onClose} disabled={busy}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
