import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson, sha256Hex } from "../lib/crypto.ts";
import { newId, nowIso } from "../lib/ids.ts";
import { schemaBreach } from "../lib/json-schema.ts";
import { toolNameProblem } from "./tool-name.ts";
import type { SchemaBoundBreach } from "../lib/schema-bounds.ts";
import { GATEWAY_META_PREFIX } from "../lib/gateway-meta.ts";
import type { ToolRequirement } from "../services/upstream.call.ts";

export type ToolStatus = "active" | "review_required" | "removed";

/** The parts of an upstream tool the gateway stores, hashes and re-publishes. */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** MCP 2025-11-25: e.g. `{ taskSupport }`. */
  execution?: Tool["execution"];
  icons?: Tool["icons"];
  /** The upstream's own `_meta`, without keys in the gateway's `dev.rayrun/` namespace. */
  _meta?: Record<string, unknown>;
}

/**
 * The fields the gateway started keeping with issue 13. A definition approved
 * before then was hashed without them; `indexStatements` uses this list to
 * recognise such a tool and carry its approval over instead of sending it to review.
 */
const FIELDS_KEPT_SINCE_ISSUE_13 = ["execution", "icons", "_meta"] as const;

export interface ToolRecord {
  uid: string;
  serviceId: string;
  serviceSlug: string;
  name: string;
  publicName: string;
  definition: ToolDefinition;
  definitionHash: string;
  approvedHash: string | null;
  previousDefinition: ToolDefinition | null;
  status: ToolStatus;
  projection: string[] | null;
  /** The validation bound the upstream's input or output schema breaks; calls are refused while it does. */
  schemaBreach: SchemaBoundBreach | null;
  /** Why clients cannot be shown the tool's public name (tool-name.ts); calls are refused while it is set. */
  nameProblem: string | null;
  /** What a client must declare to see and call the tool (the upstream lists it only to such clients); null: any client. */
  clientCapabilities: ToolRequirement[] | null;
  firstSeenAt: string;
  updatedAt: string;
}

interface ToolRow {
  uid: string;
  service_id: string;
  slug: string;
  name: string;
  definition: string;
  definition_hash: string;
  approved_hash: string | null;
  previous_definition: string | null;
  status: ToolStatus;
  projection: string | null;
  client_capabilities: string | null;
  first_seen_at: string;
  updated_at: string;
}

/**
 * Public tool names are `{serviceSlug}__{upstreamName}`. Slugs are immutable and
 * cannot contain `_`, so the first `__` always splits a name unambiguously and a
 * name never changes while its service exists.
 */
export const publicToolName = (slug: string, name: string) => `${slug}__${name}`;

function toRecord(row: ToolRow): ToolRecord {
  const definition = JSON.parse(row.definition) as ToolDefinition;
  return {
    uid: row.uid,
    serviceId: row.service_id,
    serviceSlug: row.slug,
    name: row.name,
    publicName: publicToolName(row.slug, row.name),
    definition,
    definitionHash: row.definition_hash,
    approvedHash: row.approved_hash,
    previousDefinition: row.previous_definition ? (JSON.parse(row.previous_definition) as ToolDefinition) : null,
    status: row.status,
    projection: row.projection ? (JSON.parse(row.projection) as string[]) : null,
    schemaBreach: definitionBreach(definition),
    nameProblem: toolNameProblem(row.name, publicToolName(row.slug, row.name)),
    clientCapabilities: row.client_capabilities ? (JSON.parse(row.client_capabilities) as ToolRequirement[]) : null,
    firstSeenAt: row.first_seen_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The first validation bound the definition's schemas break. It is a function
 * of the stored definition, so it is derived (and cached with the validator)
 * rather than stored: a re-index that fixes the schema clears it.
 */
export function definitionBreach(definition: ToolDefinition): SchemaBoundBreach | null {
  return schemaBreach(definition.inputSchema) ?? (definition.outputSchema ? schemaBreach(definition.outputSchema) : null);
}

const SELECT = `SELECT t.*, s.slug FROM tools t JOIN services s ON s.id = t.service_id`;

/** The definition as the upstream sent it, minus anything that would let the upstream speak for the gateway. */
export function definitionOf(tool: Tool): ToolDefinition {
  const definition: ToolDefinition = { name: tool.name, inputSchema: tool.inputSchema as Record<string, unknown> };
  if (tool.title !== undefined) definition.title = tool.title;
  if (tool.description !== undefined) definition.description = tool.description;
  if (tool.outputSchema !== undefined) definition.outputSchema = tool.outputSchema as Record<string, unknown>;
  if (tool.annotations !== undefined) definition.annotations = tool.annotations as Record<string, unknown>;
  if (tool.execution !== undefined) definition.execution = tool.execution;
  if (tool.icons !== undefined) definition.icons = tool.icons;
  const meta = tool._meta ? Object.entries(tool._meta).filter(([key]) => !key.startsWith(GATEWAY_META_PREFIX)) : [];
  if (meta.length) definition._meta = Object.fromEntries(meta);
  return definition;
}

export const definitionHash = (definition: ToolDefinition) => sha256Hex(canonicalJson(definition));

/** The hash this definition had when the gateway dropped the fields it keeps since issue 13. */
const hashBeforeIssue13 = (definition: ToolDefinition) =>
  definitionHash(
    Object.fromEntries(
      Object.entries(definition).filter(([key]) => !(FIELDS_KEPT_SINCE_ISSUE_13 as readonly string[]).includes(key)),
    ) as ToolDefinition,
  );

export async function listTools(
  db: D1Database,
  workspaceId: string,
  filter: { serviceId?: string; status?: ToolStatus; publicName?: string } = {},
): Promise<ToolRecord[]> {
  const clauses = ["t.workspace_id = ?"];
  const params: string[] = [workspaceId];
  if (filter.serviceId) {
    clauses.push("t.service_id = ?");
    params.push(filter.serviceId);
  }
  if (filter.status) {
    clauses.push("t.status = ?");
    params.push(filter.status);
  }
  if (filter.publicName !== undefined) {
    clauses.push("s.slug || '__' || t.name = ?");
    params.push(filter.publicName);
  }
  const { results } = await db
    .prepare(`${SELECT} WHERE ${clauses.join(" AND ")} ORDER BY s.slug, t.name`)
    .bind(...params)
    .all<ToolRow>();
  return results.map(toRecord);
}

export async function findTool(db: D1Database, workspaceId: string, toolUid: string): Promise<ToolRecord | null> {
  const row = await db.prepare(`${SELECT} WHERE t.workspace_id = ? AND t.uid = ?`).bind(workspaceId, toolUid).first<ToolRow>();
  return row ? toRecord(row) : null;
}

/** Accepts the tool's current definition after a changed-definition review. */
export async function approveDefinition(db: D1Database, workspaceId: string, toolUid: string, definitionHash: string): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE tools SET status = 'active', approved_hash = definition_hash, previous_definition = NULL, updated_at = ?
       WHERE workspace_id = ? AND uid = ? AND status = 'review_required' AND definition_hash = ?`,
    )
    .bind(nowIso(), workspaceId, toolUid, definitionHash)
    .run();
  return result.meta.changes === 1;
}

export async function setProjection(db: D1Database, workspaceId: string, toolUid: string, fields: string[] | null): Promise<void> {
  await db
    .prepare("UPDATE tools SET projection = ?, updated_at = ? WHERE workspace_id = ? AND uid = ?")
    .bind(fields ? JSON.stringify(fields) : null, nowIso(), workspaceId, toolUid)
    .run();
}

export interface IndexSummary {
  added: string[];
  changed: string[];
  removed: string[];
  unchanged: number;
  /** Tools this pass put in review (new ones that start there, changed definitions): refused until approved. */
  review: string[];
  /** Listed tools whose schemas break a validation bound: stored, but every call is refused `schema_too_complex`. */
  schemaTooComplex: { name: string; bound: SchemaBoundBreach["bound"] }[];
  /** Listed tools whose public names MCP does not allow: stored, hidden, every call refused `tool_name_invalid`. */
  invalidNames: string[];
  /** Present when the upstream's instructions were longer than MAX_SERVICE_INSTRUCTIONS_CHARS and were cut. */
  instructionsTruncated?: true;
}

/**
 * Writes one indexing pass. New tools start as `newTools` says (active, or in
 * review with nothing approved yet); a tool whose
 * definition hash differs from the last approved one goes to review (blocked);
 * a tool the upstream stopped listing is marked removed, never deleted, so its
 * toolUid and history survive. Returns the statements so the caller can batch
 * them with the service row itself.
 */
export async function indexStatements(
  db: D1Database,
  workspaceId: string,
  serviceId: string,
  upstreamTools: Tool[],
  existing: ToolRecord[],
  options: {
    /** Tool name → what a client must declare to see it; absent: any client. */
    requirements?: ReadonlyMap<string, ToolRequirement[]>;
    /** How a tool the upstream lists for the first time starts. */
    newTools: "active" | "review_required";
    /** The service's slug, the first part of its tools' public names. */
    serviceSlug: string;
  },
): Promise<{ statements: D1PreparedStatement[]; summary: IndexSummary }> {
  const requirements = options.requirements ?? new Map<string, ToolRequirement[]>();
  const now = nowIso();
  const byName = new Map(existing.map((tool) => [tool.name, tool]));
  const seen = new Set<string>();
  const statements: D1PreparedStatement[] = [];
  const summary: IndexSummary = { added: [], changed: [], removed: [], unchanged: 0, review: [], schemaTooComplex: [], invalidNames: [] };

  for (const tool of upstreamTools) {
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    const definition = definitionOf(tool);
    // A schema past a bound never fails the refresh: the tool is kept, and refused when called.
    const breach = definitionBreach(definition);
    if (breach) summary.schemaTooComplex.push({ name: tool.name, bound: breach.bound });
    if (toolNameProblem(tool.name, publicToolName(options.serviceSlug, tool.name))) summary.invalidNames.push(tool.name);
    const hash = await definitionHash(definition);
    const current = byName.get(tool.name);
    const required = requirements.get(tool.name) ?? null;
    const requiredJson = required ? JSON.stringify(required) : null;
    if (!current) {
      summary.added.push(tool.name);
      // A tool in review has no approved definition yet: approving it (the review route) sets one.
      const inReview = options.newTools === "review_required";
      if (inReview) summary.review.push(tool.name);
      statements.push(
        db
          .prepare(
            `INSERT INTO tools (uid, workspace_id, service_id, name, definition, definition_hash, approved_hash, status, client_capabilities, first_seen_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .bind(
            newId("tool"),
            workspaceId,
            serviceId,
            tool.name,
            JSON.stringify(definition),
            hash,
            inReview ? null : hash,
            options.newTools,
            requiredJson,
            now,
            now,
          ),
      );
      continue;
    }
    // Who may see the tool is not part of its definition: it follows the upstream without a review.
    if (requiredJson !== (current.clientCapabilities ? JSON.stringify(current.clientCapabilities) : null)) {
      statements.push(db.prepare(`UPDATE tools SET client_capabilities = ? WHERE uid = ?`).bind(requiredJson, current.uid));
    }
    // A tool approved before the gateway kept these fields, whose upstream did not change: the
    // approval carries over to the fuller definition (nothing the admin reviewed changed).
    const carriesApproval =
      hash !== current.approvedHash &&
      current.status === "active" &&
      current.definitionHash === current.approvedHash &&
      (await hashBeforeIssue13(definition)) === current.approvedHash;
    if (carriesApproval) {
      summary.changed.push(tool.name);
      statements.push(
        db
          .prepare(`UPDATE tools SET definition = ?, definition_hash = ?, approved_hash = ?, updated_at = ? WHERE uid = ?`)
          .bind(JSON.stringify(definition), hash, hash, now, current.uid),
      );
      continue;
    }
    const status: ToolStatus = hash === current.approvedHash ? "active" : "review_required";
    if (hash === current.definitionHash && status === current.status) {
      summary.unchanged++;
      continue;
    }
    if (hash !== current.definitionHash) summary.changed.push(tool.name);
    if (status === "review_required") summary.review.push(tool.name);
    // Keep the definition an admin last approved, so the review can show what changed.
    const previous =
      status === "active"
        ? null
        : current.status === "review_required"
          ? current.previousDefinition
          : current.definitionHash === current.approvedHash
            ? current.definition
            : current.previousDefinition;
    statements.push(
      db
        .prepare(`UPDATE tools SET definition = ?, definition_hash = ?, status = ?, previous_definition = ?, updated_at = ? WHERE uid = ?`)
        .bind(JSON.stringify(definition), hash, status, previous ? JSON.stringify(previous) : null, now, current.uid),
    );
  }

  for (const tool of existing) {
    if (seen.has(tool.name) || tool.status === "removed") continue;
    summary.removed.push(tool.name);
    statements.push(db.prepare(`UPDATE tools SET status = 'removed', updated_at = ? WHERE uid = ?`).bind(now, tool.uid));
  }
  return { statements, summary };
}
