// A tool's mode under a profile, as the Profiles matrix and a tool's own page
// show and change it: the effective mode (what /mcp enforces), the override
// behind it, and the risk rule that holds it when there is one. A change that
// loosens access is confirmed first; every change can be undone.
import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import type { ConfirmRequest } from "../ui/ConfirmDialog.tsx";
import { ErrorNote } from "../ui/status.tsx";

export type Mode = Schemas["ToolMode"]["mode"];
export type Cell = Schemas["ToolMode"];
export type Profile = Schemas["AccessProfile"];
export type MatrixRow = Schemas["PolicyMatrix"]["tools"][number];

const STRICTNESS: Record<Mode, number> = { allow: 0, approval: 1, block: 2 };
export const MODES: Mode[] = ["allow", "approval", "block"];

const HINT_LABELS: Record<NonNullable<Cell["floor"]>["hint"], string> = {
  destructiveHint: "destructive tools",
  openWorldHint: "open-world tools",
};

/** What /mcp would enforce with this override (null: the profile's default), given the cell's risk floor. */
export function modeWith(override: Mode | null, cell: Cell, profile: Profile): Mode {
  const chosen = override ?? profile.defaultMode;
  return cell.floor && STRICTNESS[cell.floor.mode] > STRICTNESS[chosen] ? cell.floor.mode : chosen;
}

export const loosens = (before: Mode, after: Mode) => STRICTNESS[after] < STRICTNESS[before];

/** Sets the override, or removes it (null) so the profile's default mode applies. */
export async function setOverride(ws: string, toolUid: string, profileId: string, mode: Mode | null): Promise<void> {
  if (mode === null) {
    await call(api.DELETE("/v1/workspaces/{ws}/tools/{toolUid}/policy/{profileId}", { params: { path: { ws, toolUid, profileId } } }));
    return;
  }
  await call(api.PUT("/v1/workspaces/{ws}/tools/{toolUid}/policy", { params: { path: { ws, toolUid } }, body: { profileId, mode } }));
}

export function ModeLabel({ mode }: { mode: Mode }) {
  return <span class={`cell-mode mode-${mode}`}>{mode}</span>;
}

/** The last change, with its undo. */
export interface PolicyChange {
  text: string;
  undo: () => Promise<void>;
}

/**
 * One cell: a select of the override (or the profile's default) and, beside it, the effective mode; a cell
 * a risk rule holds is locked at that mode (its select offers only stricter choices) and says why.
 */
export function ModeCell(props: {
  ws: string;
  tool: { uid: string; publicName: string };
  cell: Cell;
  profile: Profile;
  /** Asks before a loosening change; the change runs only when confirmed. */
  confirm: (request: ConfirmRequest) => void;
  onChanged: (change: PolicyChange) => void;
}) {
  const { ws, tool, cell, profile, confirm, onChanged } = props;
  const [error, setError] = useState<unknown>(undefined);
  const floorMode = cell.floor?.mode;
  const locked = (mode: Mode) => floorMode !== undefined && STRICTNESS[mode] < STRICTNESS[floorMode];

  const apply = async (override: Mode | null) => {
    setError(undefined);
    const previous = cell.override;
    try {
      await setOverride(ws, tool.uid, profile.id, override);
      const describe = (mode: Mode | null) => (mode === null ? `the profile default (${profile.defaultMode})` : mode);
      onChanged({
        text: `${tool.publicName} under ${profile.name}: ${describe(previous)} → ${describe(override)}.`,
        undo: () => setOverride(ws, tool.uid, profile.id, previous),
      });
    } catch (failure) {
      setError(failure);
    }
  };

  const choose = (value: string) => {
    const override = value === "" ? null : (value as Mode);
    const after = modeWith(override, cell, profile);
    if (!loosens(cell.mode, after)) return void apply(override);
    confirm({
      title: `Loosen ${tool.publicName} under ${profile.name}?`,
      confirmLabel: `Change to ${after}`,
      body: (
        <p>
          Agents in profile <strong>{profile.name}</strong> go from <strong>{cell.mode}</strong> to <strong>{after}</strong> for{" "}
          <code>{tool.publicName}</code> on their next call.
        </p>
      ),
      run: () => apply(override),
    });
  };

  const label = `Mode of ${tool.publicName} for profile ${profile.name}`;
  return (
    <>
      <label class="check">
        <span class="visually-hidden">{label}</span>
        <select
          value={cell.override ?? ""}
          onChange={(e) => choose(e.currentTarget.value)}
          data-cell={`${tool.publicName}|${profile.name}`}
        >
          <option value="">profile default ({profile.defaultMode})</option>
          {MODES.map((mode) => (
            <option key={mode} value={mode} disabled={locked(mode)}>
              {mode}
              {locked(mode) ? " (locked by a risk rule)" : ""}
            </option>
          ))}
        </select>
      </label>
      <span class="visually-hidden">Effective: </span>
      <ModeLabel mode={cell.mode} />
      {cell.floor && (
        <span class="locked" title={`The profile's ${cell.floor.hint} rule holds ${HINT_LABELS[cell.floor.hint]} at ${cell.floor.mode}`}>
          locked at {cell.floor.mode} by its {cell.floor.hint} rule
        </span>
      )}
      <ErrorNote error={error} />
    </>
  );
}

/** The notice after a change, with Undo. */
export function ChangeNotice({ change, onUndone }: { change: PolicyChange | null; onUndone: () => void }) {
  const [error, setError] = useState<unknown>(undefined);
  if (!change) return null;
  return (
    <div class="notice" role="status">
      {change.text}{" "}
      <button
        type="button"
        class="secondary"
        onClick={async () => {
          setError(undefined);
          try {
            await change.undo();
            onUndone();
          } catch (failure) {
            setError(failure);
          }
        }}
      >
        Undo
      </button>
      <ErrorNote error={error} />
    </div>
  );
}
