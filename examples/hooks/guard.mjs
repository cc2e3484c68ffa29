// A command handler: the event on stdin, the answer on stdout; exit 2 denies with stderr as the reason.
let text = "";
for await (const chunk of process.stdin) text += chunk;
const event = JSON.parse(text);
const command = String(event.tool_input?.command ?? "");
if (/\brm\s+-\w*r/.test(command)) {
  process.stderr.write(`recursive delete refused: ${command}`);
  process.exit(2);
}
if (/^\s*curl\b/.test(command)) {
  // A rewrite: the same call, made quiet and bounded.
  process.stdout.write(
    JSON.stringify({
      decision: "rewrite",
      updated_input: { ...event.tool_input, command: command.replace(/^\s*curl\b/, "curl -sS --max-time 20") },
    }),
  );
}
