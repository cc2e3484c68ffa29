/** Programs the Code Mode fairness tests and `npm run bench -- fairness` send (no test imports: Node runs it too). */

/** A program of about 95 KiB of source; `variant` makes its text (so its digest) differ. It returns "item 0". */
export function bigProgram(variant: number): string {
  const lines = [`// variant ${variant}`];
  let length = lines[0]!.length;
  for (let i = 0; length < 95 * 1024; i++) {
    const line = `const value${i} = { name: "item ${i}", list: [1, 2, 3] };`;
    lines.push(line);
    length += line.length + 1;
  }
  return `${lines.join("\n")}\nreturn value0.name;`;
}
