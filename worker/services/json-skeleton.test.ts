import { describe, it } from "vitest";
import { LONG_STRING_CHARS, SkeletonBuilder, withoutLongStrings } from "./json-skeleton.ts";

/** A string over the limit; by default one `atob` takes (a multiple of 4 of base64 letters), so it reduces to `""`. */
const long = (char = "x", extra = 4) => char.repeat(LONG_STRING_CHARS + extra);
const isBase64 = (text: string) => {
  try {
    atob(text);
    return true;
  } catch {
    return false;
  }
};

/** Whether `reduced` is `original` with some string values emptied: same members, same order, same everything else. */
function sameButEmptied(original: unknown, reduced: unknown): boolean {
  // A long string becomes "" only when atob takes it, and "-" otherwise (or when its text is not plainly base64).
  if (typeof original === "string" && typeof reduced === "string" && original !== reduced) {
    return (reduced === "" && isBase64(original)) || reduced === "-";
  }
  if (typeof original !== "object" || original === null || typeof reduced !== "object" || reduced === null) {
    return Object.is(original, reduced);
  }
  if (Array.isArray(original) !== Array.isArray(reduced)) return false;
  const originalKeys = Object.keys(original);
  const reducedKeys = Object.keys(reduced);
  if (originalKeys.join("\u0000") !== reducedKeys.join("\u0000")) return false;
  return originalKeys.every((key) => sameButEmptied((original as Record<string, unknown>)[key], (reduced as Record<string, unknown>)[key]));
}

const parses = (text: string) => {
  try {
    return { ok: true as const, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false as const };
  }
};

/** The property every reduction must keep: it parses exactly when the text does, to the same value but emptied strings. */
function expectFaithful(text: string, expect: (value: unknown) => { toBe: (expected: unknown) => void }) {
  const reduced = withoutLongStrings(text);
  if (reduced === null) return;
  const whole = parses(text);
  const part = parses(reduced);
  expect(part.ok).toBe(whole.ok);
  if (whole.ok && part.ok) expect(sameButEmptied(whole.value, part.value)).toBe(true);
}

describe("withoutLongStrings", () => {
  it("empties long string values, and keeps short strings and member names", ({ expect }) => {
    const text = JSON.stringify({ content: [{ type: "text", text: long() }], short: "kept", [long("k", -1)]: 1 });
    expect(withoutLongStrings(text)).toBe(`{"content":[{"type":"text","text":""}],"short":"kept","${long("k", -1)}":1}`);
    // A long member name would be lost, so the text is parsed whole; spaces before its colon change nothing.
    expect(withoutLongStrings(`{"${long("k")}":"v"}`)).toBeNull();
    expect(withoutLongStrings(`{"${long("k")}"   : "v"}`)).toBeNull();
    expect(withoutLongStrings(`{"a":"${long()}"   , "b":1}`)).toBe(`{"a":""   , "b":1}`);
  });

  it('leaves "" for a long string atob takes and "-" for any other, so a base64 check still holds', ({ expect }) => {
    const reduced = (value: string) => withoutLongStrings(JSON.stringify({ data: value }));
    const letters = "QUJD".repeat(300);
    for (const value of [letters, `${letters}QQ==`, `${letters}QUI=`, `${letters}QUJ`, `${letters}QU`]) {
      expect(isBase64(value)).toBe(true);
      expect(reduced(value), value.slice(-4)).toBe('{"data":""}');
    }
    for (const value of [`${letters}Q`, `${letters}Q===`, `${letters}QU=J`, `${letters.slice(0, 600)} ${letters}`, `${letters}-_`]) {
      expect(reduced(value), value.slice(-4)).toBe('{"data":"-"}');
    }
    // Cut anywhere, the padding still reads as one run at the end.
    for (const value of [`${letters}QQ==`, `${letters}Q=Q=`]) {
      const text = JSON.stringify({ data: value });
      for (let cut = text.length - 8; cut <= text.length; cut++) {
        const builder = new SkeletonBuilder();
        builder.push(text.slice(0, cut));
        builder.push(text.slice(cut));
        expect(builder.finish(), `${value.slice(-4)} cut at ${cut}`).toBe(reduced(value));
      }
    }
    // Base64 written with escapes (`\/`) is base64 to atob, but not plainly: the conservative answer.
    expect(reduced(`${letters}a/b/`)).toBe('{"data":""}');
    expect(withoutLongStrings(`{"data":"${letters}a\\/b\\/"}`)).toBe('{"data":"-"}');
  });

  it("returns the text itself when no string is long", ({ expect }) => {
    const text = JSON.stringify({ content: [{ type: "text", text: "x".repeat(LONG_STRING_CHARS) }] });
    expect(withoutLongStrings(text)).toBe(text);
  });

  it("finds a long string's end past escaped quotes and backslashes, as a JSON lexer does", ({ expect }) => {
    const tricky = `${long()}\\"},\\"isError\\":true,\\"x\\":\\"\\\\`;
    const text = `{"content":[{"type":"text","text":"${tricky}"}]}`;
    expect(JSON.parse(text).content[0].text).toContain('"},"isError":true');
    expect(withoutLongStrings(text)).toBe('{"content":[{"type":"text","text":"-"}]}');
    const unicode = `{"text":"${long()}\\u0022\\u005c","type":"text"}`;
    expect(withoutLongStrings(unicode)).toBe('{"text":"-","type":"text"}');
  });

  it("refuses to reduce what it cannot check in place, so the text is parsed whole", ({ expect }) => {
    const refused = {
      "a raw control character": `{"text":"${long()}\u0001"}`,
      "a raw tab between tokens": `{"text":\t"${long()}"}`,
      "an invalid escape": `{"text":"${long()}\\x41"}`,
      "a short \\u escape": `{"text":"${long()}\\u12G4"}`,
      "an unterminated string": `{"text":"${long()}`,
      "too many strings": JSON.stringify(Array.from({ length: 5000 }, () => "s")),
      "too many escapes": JSON.stringify({ text: "\n".repeat(5000) }),
    };
    for (const [why, text] of Object.entries(refused)) expect(withoutLongStrings(text), why).toBeNull();
  });

  it("keeps a malformed text malformed", ({ expect }) => {
    for (const text of [`{"text":"${long()}" "type":"text"}`, `{"text":"${long()}",}`, `["${long()}"`, `{"text":"${long()}"}}`]) {
      const reduced = withoutLongStrings(text);
      expect(reduced).not.toBeNull();
      expect(() => JSON.parse(reduced!)).toThrow(SyntaxError);
    }
  });

  it("reduces the same wherever the pieces are cut, down to one character a piece", ({ expect }) => {
    // Escapes in member names and values, multi-byte characters, a long string before spaces and a colon.
    const cases: Record<string, string | null> = {
      [`{"content":[{"t\\u0079pe":"text","text":"${long()}\\u0041\\n\\"q\\\\é𝄞"}],"_m\\u0065ta":{"k":"é"}}`]:
        '{"content":[{"t\\u0079pe":"text","text":"-"}],"_m\\u0065ta":{"k":"é"}}',
      [`{"a":"${long()}"   , "b":"\\u00e9"}`]: '{"a":""   , "b":"\\u00e9"}',
      [`{"a":"${long()}"   : 1}`]: null,
      [`{"is\\u0045rror":true,"text":"${long()}\\u12G4"}`]: null,
    };
    for (const [text, reduced] of Object.entries(cases)) {
      expect(withoutLongStrings(text)).toBe(reduced);
      expectFaithful(text, expect);
      for (let cut = 0; cut <= text.length; cut++) {
        const builder = new SkeletonBuilder();
        builder.push(text.slice(0, cut));
        builder.push(text.slice(cut));
        expect(builder.finish(), `cut at ${cut}`).toBe(reduced);
      }
      const trickle = new SkeletonBuilder();
      for (const char of text) trickle.push(char);
      expect(trickle.finish()).toBe(reduced);
    }
    // The escapes the reduction keeps are the member names a parser reads.
    expect(Object.keys(JSON.parse(withoutLongStrings(Object.keys(cases)[0]!)!))).toEqual(["content", "_meta"]);
  });

  it("agrees with JSON.parse on thousands of mutated texts", ({ expect }) => {
    // A fixed-seed generator (xorshift), so a failure is reproducible.
    let seed = 0x2545f491;
    const random = (below: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % below;
    };
    const pieces = ["\t", "\u0001", '"', "\\", ":", ",", "}", "]", "{", "[", " ", "u", "n", "0", '\\"', "\\\\", "\\u00"];
    const bases = [
      JSON.stringify({
        content: [
          { type: "text", text: long("a", 5) },
          { type: "image", data: long("Q", 9), mimeType: "image/png" },
        ],
      }),
      JSON.stringify({ content: [{ type: "text", text: `${long("b")}"\\"\\\\` }], _meta: { note: 'short "quoted"', [long("m", -1)]: 1 } }),
      `{"a" : "${long("c")}" , "b":[ "${long("d")}" , 1.5e3 , true , null ]}`,
    ];
    let reducedCount = 0;
    for (let round = 0; round < 3000; round++) {
      let text = bases[random(bases.length)]!;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1);
        const piece = pieces[random(pieces.length)]!;
        text = random(2) ? text.slice(0, at) + piece + text.slice(at) : text.slice(0, at) + piece + text.slice(at + 1);
      }
      const whole = withoutLongStrings(text);
      if (whole !== null) reducedCount++;
      expectFaithful(text, expect);
      // Fed in pieces cut anywhere (inside an escape, between a string and its colon), the reduction is the same.
      const builder = new SkeletonBuilder();
      for (let at = 0; at < text.length;) {
        const next = Math.min(text.length, at + 1 + random(1500));
        builder.push(text.slice(at, next));
        at = next;
      }
      expect(builder.finish()).toBe(whole);
    }
    // The property was exercised, not skipped: most mutated texts still reduce.
    expect(reducedCount).toBeGreaterThan(1500);
  });
});
