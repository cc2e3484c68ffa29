import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { afterEach, describe, it, vi } from "vitest";
import errorsDoc from "../../docs/errors.md?raw";
import { ERROR_CODES, ERROR_STATUS } from "../../schema/api/errors.ts";
import { api } from "../../test/helpers.ts";
import { ApiError, handleError } from "./errors.ts";

interface DocumentedRow {
  status: number;
  codes: string[];
  when: string;
}

/** The table under docs/errors.md's "## REST errors" heading. */
function documentedRestErrors(): DocumentedRow[] {
  const section = errorsDoc.split(/^## REST errors$/m)[1]?.split(/^## /m)[0] ?? "";
  const lines = section.split("\n");
  const start = lines.findIndex((line) => line.startsWith("| status"));
  const rows: DocumentedRow[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const [status = "", code = "", when = ""] = line.split("|").slice(1, -1);
    rows.push({
      status: Number(status.trim()),
      codes: [...code.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? ""),
      when: when.trim(),
    });
  }
  return rows;
}

const pairs = (entries: [number, string][]) => entries.map(([status, code]) => `${status} ${code}`).sort();

describe("the REST error table in docs/errors.md", () => {
  it("lists exactly the codes and statuses the API returns, each code once, each row with a 'when'", ({ expect }) => {
    const rows = documentedRestErrors();
    expect(rows.length).toBeGreaterThan(0);
    const documented = rows.flatMap((row) => row.codes.map((code): [number, string] => [row.status, code]));
    expect(pairs(documented)).toEqual(pairs(Object.entries(ERROR_STATUS).map(([code, status]) => [status, code])));
    expect(new Set(documented.map(([, code]) => code)).size).toBe(documented.length);
    for (const row of rows) expect(row.when, `row ${row.codes.join(", ")}`).not.toBe("");
  });
});

describe("handleError", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const appThrowing = (error: Error) => {
    const app = new Hono();
    app.onError(handleError);
    app.get("/", () => {
      throw error;
    });
    return app;
  };

  it("answers with the code's status, details and headers, and keeps the cause for the Worker log only", async ({ expect }) => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const cause = new Error("upstream said: secret-token-123");
    const res = await appThrowing(
      new ApiError("rate_limited", {
        message: "Too many compile attempts",
        details: { quota: "compile_attempts" },
        headers: { "retry-after": "42" },
        cause,
      }),
    ).request("/");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("42");
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: "rate_limited", message: "Too many compile attempts", details: { quota: "compile_attempts" } },
    });
    expect(text).not.toContain("secret-token-123");
    expect(logged).toHaveBeenCalledWith("rate_limited: Too many compile attempts", cause);
  });

  it("logs nothing for an error without a cause", async ({ expect }) => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await appThrowing(new ApiError("precondition_required", { message: "Send If-Match" })).request("/");
    expect(res.status).toBe(428);
    expect(await res.json()).toEqual({ error: { code: "precondition_required", message: "Send If-Match" } });
    expect(logged).not.toHaveBeenCalled();
  });

  it("turns an unexpected error into 500 internal_error, its message only in the log", async ({ expect }) => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const bug = new TypeError("cannot read properties of undefined (reading 'secret')");
    const res = await appThrowing(bug).request("/");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "internal_error", message: "Internal error" } });
    expect(logged).toHaveBeenCalledWith("internal_error: Internal error", bug);
  });

  it("maps Hono's own HTTPException to the code for its status", async ({ expect }) => {
    const malformed = await appThrowing(new HTTPException(400, { message: "Malformed JSON in request body" })).request("/");
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: { code: "invalid_request", message: "Malformed JSON in request body" } });
    const denied = await appThrowing(new HTTPException(401)).request("/");
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({ error: { code: "unauthorized", message: "Request failed" } });
  });
});

describe("OpenAPI error codes", () => {
  it("enumerates every code in the Error schema and names each status's codes on a route", async ({ expect }) => {
    const res = await api("/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.components.schemas.Error.properties.error.properties.code.enum).toEqual(ERROR_CODES);
    const saveDraft = res.body.paths["/v1/workspaces/{ws}/tools/{toolUid}/hook/draft"].put;
    expect(saveDraft.responses["412"].description).toContain("`precondition_failed`");
    expect(saveDraft.responses["413"].description).toContain("`history_full`");
    expect(saveDraft.responses["429"].description).toContain("`rate_limited`");
  });
});
