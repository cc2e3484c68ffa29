import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

/** One tools/call the demo upstream received, kept so tests can prove what reached it. */
export interface ReceivedCall {
  tool: string;
  arguments: unknown;
  at: string;
}

const RELEASE_NOTES = [
  { version: "2.4.0", date: "2026-10-02", title: "Faster search", summary: "Search results now stream in under 50 ms." },
  { version: "2.3.1", date: "2026-08-19", title: "Billing fix", summary: "Invoices no longer double-count seats." },
  { version: "2.3.0", date: "2026-07-30", title: "Audit export", summary: "Admins can export audit logs as CSV." },
  { version: "2.2.0", date: "2026-05-11", title: "SSO", summary: "SAML single sign-on for enterprise plans." },
];

const CUSTOMERS = [
  { name: "Ada Lovelace", email: "ada@example.com", phone: "+44 20 7946 0018", plan: "enterprise" },
  { name: "Grace Hopper", email: "grace@example.com", phone: "+1 202 555 0142", plan: "team" },
];

const releaseNote = z.object({ version: z.string(), date: z.string(), title: z.string(), summary: z.string() });

export const DEMO_INSTRUCTIONS =
  "Release notes and customer records of the demo product. Search release notes before answering product questions.";

const versionsStartingWith = (value: string) => RELEASE_NOTES.map((note) => note.version).filter((version) => version.startsWith(value));

const noteMarkdown = (note: (typeof RELEASE_NOTES)[number]) => `# ${note.version}: ${note.title}\n\n${note.date}\n\n${note.summary}\n`;

/**
 * The demo upstream's tools, resources and prompts. `record` sees every tool
 * call before it runs, so a test can assert exactly which arguments reached the
 * upstream (or that none did).
 */
export function createDemoServer(record: (call: ReceivedCall) => void): McpServer {
  const server = new McpServer({ name: "rayrun-demo-upstream", version: "1.0.0" }, { instructions: DEMO_INSTRUCTIONS });
  const received = (tool: string, args: unknown) => record({ tool, arguments: args, at: new Date().toISOString() });

  server.registerTool(
    "search_release_notes",
    {
      description: "Search the product's public release notes by keyword.",
      inputSchema: { query: z.string().describe("Words to look for in titles and summaries") },
      outputSchema: { items: z.array(releaseNote) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      received("search_release_notes", args);
      const words = args.query.toLowerCase().split(/\s+/).filter(Boolean);
      const items = RELEASE_NOTES.filter((note) => words.some((word) => `${note.title} ${note.summary}`.toLowerCase().includes(word)));
      return { content: [{ type: "text", text: JSON.stringify({ items }) }], structuredContent: { items } };
    },
  );

  server.registerTool(
    "lookup_customer",
    {
      description: "Look up a customer record by email address.",
      inputSchema: { email: z.string().describe("The customer's email address") },
      outputSchema: { name: z.string(), email: z.string(), phone: z.string(), plan: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      received("lookup_customer", args);
      const customer = CUSTOMERS.find((c) => c.email === args.email.toLowerCase());
      if (!customer) {
        return { isError: true, content: [{ type: "text", text: `No customer with email ${args.email}` }] };
      }
      return { content: [{ type: "text", text: JSON.stringify(customer) }], structuredContent: customer };
    },
  );

  server.registerTool(
    "delete_record",
    {
      description: "Permanently delete a record by id.",
      inputSchema: { id: z.string().describe("Record id") },
      annotations: { destructiveHint: true, readOnlyHint: false },
    },
    async (args) => {
      received("delete_record", args);
      return { content: [{ type: "text", text: `Deleted record ${args.id}` }] };
    },
  );

  server.registerTool(
    "export_report",
    {
      description: "Export a usage report. The report service is always down in the demo.",
      inputSchema: { month: z.string().describe("Month as YYYY-MM") },
      // Says nothing about destructiveHint, so risk rules meet a tool that leaves a hint to the spec default.
      annotations: { openWorldHint: true },
    },
    async (args) => {
      received("export_report", args);
      return { isError: true, content: [{ type: "text", text: "Report service unavailable: try again later" }] };
    },
  );

  server.registerResource(
    "latest_release_note",
    "notes://release/latest",
    { title: "Latest release note", description: "The newest release note, as Markdown.", mimeType: "text/markdown" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/markdown", text: noteMarkdown(RELEASE_NOTES[0]!) }] }),
  );

  server.registerResource(
    "release_note",
    new ResourceTemplate("notes://release/{version}", { list: undefined, complete: { version: versionsStartingWith } }),
    { title: "Release note by version", description: "One release note, as Markdown.", mimeType: "text/markdown" },
    async (uri, { version }) => {
      const note = RELEASE_NOTES.find((candidate) => candidate.version === version);
      if (!note) throw new Error(`No release note for version ${String(version)}`);
      return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: noteMarkdown(note) }] };
    },
  );

  server.registerPrompt(
    "summarize_release",
    {
      title: "Summarize a release",
      description: "Ask for a customer-facing summary of one release.",
      argsSchema: { version: completable(z.string().describe("Release version, e.g. 2.4.0"), versionsStartingWith) },
    },
    ({ version }) => ({
      messages: [
        { role: "user", content: { type: "text", text: `Summarize release ${version} for customers in two sentences.` } },
        { role: "user", content: { type: "resource_link", uri: `notes://release/${version}`, name: `release_${version}` } },
      ],
    }),
  );

  return server;
}
