import { afterEach, beforeEach, describe, it, vi } from "vitest";
import { CALL_IDLE_TIMEOUT_MS, CallDeadline, MAX_CALL_DURATION_MS, UpstreamTimeout } from "./upstream.call.ts";

/** The reason a tripped deadline aborted with, as the call path reads it. */
const reason = (deadline: CallDeadline) => (deadline.signal.reason as UpstreamTimeout).message;

// The clocks under a fake timer and date, so ten minutes pass without waiting (the end-to-end idle test waits 30 s).
describe("a call's idle and total clocks", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("trips idle after a silence of the idle timeout, counted from the last sign of life", ({ expect }) => {
    const deadline = new CallDeadline(undefined);
    vi.advanceTimersByTime(CALL_IDLE_TIMEOUT_MS - 1_000);
    deadline.touch();
    vi.advanceTimersByTime(CALL_IDLE_TIMEOUT_MS - 1_000);
    expect(deadline.tripped).toBeNull();
    vi.advanceTimersByTime(1_000);
    expect(deadline.tripped).toBe("idle");
    expect(deadline.signal.aborted).toBe(true);
    expect(reason(deadline)).toBe(`The upstream sent nothing for ${CALL_IDLE_TIMEOUT_MS / 1000} s, so the call was stopped`);
    deadline.dispose();
  });

  it("holds the idle clock while the client answers, and starts it again from the answer", async ({ expect }) => {
    const deadline = new CallDeadline(undefined);
    let answer!: () => void;
    const held = deadline.hold(() => new Promise<void>((resolve) => (answer = resolve)));
    // A person filling in an elicitation for three idle timeouts is not silence.
    vi.advanceTimersByTime(3 * CALL_IDLE_TIMEOUT_MS);
    expect(deadline.tripped).toBeNull();
    answer();
    await held;
    vi.advanceTimersByTime(CALL_IDLE_TIMEOUT_MS - 1);
    expect(deadline.tripped).toBeNull();
    vi.advanceTimersByTime(1);
    expect(deadline.tripped).toBe("idle");
    deadline.dispose();
  });

  it("trips duration at the maximum however much life the upstream shows", ({ expect }) => {
    const deadline = new CallDeadline(undefined);
    for (let elapsed = 0; elapsed < MAX_CALL_DURATION_MS - 5_000; elapsed += 5_000) {
      vi.advanceTimersByTime(5_000);
      deadline.touch();
    }
    expect(deadline.tripped).toBeNull();
    vi.advanceTimersByTime(5_000);
    expect(deadline.tripped).toBe("duration");
    expect(reason(deadline)).toBe(`The call ran past the maximum of ${MAX_CALL_DURATION_MS / 60_000} minutes, so it was stopped`);
    deadline.dispose();
  });

  it("leaves no timer behind once disposed", ({ expect }) => {
    const deadline = new CallDeadline(undefined);
    deadline.dispose();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(MAX_CALL_DURATION_MS);
    expect(deadline.tripped).toBeNull();
  });
});
