// The time a record line carries, taken on every call. `new Date().toISOString()` formats the
// whole date each time (several µs inside a call); the part up to the second changes once a
// second, so it is formatted then and the milliseconds are appended.

let second = -1;
/** `YYYY-MM-DDTHH:MM:SS.` of `second`. */
let prefix = "";

/** The current time as `new Date().toISOString()` gives it (for years 1970 to 9999). */
export function isoNow(): string {
  const now = Date.now();
  const at = Math.floor(now / 1000);
  if (at !== second) {
    second = at;
    prefix = new Date(at * 1000).toISOString().slice(0, 20);
  }
  return `${prefix}${String(now - at * 1000).padStart(3, "0")}Z`;
}
