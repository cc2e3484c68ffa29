import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * Every stable code the REST API returns, each with its one HTTP status. Clients
 * branch on these codes, so a code is never renamed or reused for something else.
 * Nothing else names a status: `ApiError` reads it from here, the OpenAPI document
 * lists these codes, and a test holds docs/errors.md's "REST errors" table equal to this one.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  url_not_allowed: 400,
  oauth_state_invalid: 400,
  oauth_callback_error: 400,
  projection_requires_output_schema: 400,
  unauthorized: 401,
  forbidden: 403,
  csrf_refused: 403,
  not_found: 404,
  conflict: 409,
  no_review_pending: 409,
  definition_changed: 409,
  approval_not_pending: 409,
  hook_history_exists: 409,
  not_tested: 409,
  incompatible_revision: 409,
  service_deleted: 409,
  hook_reset: 409,
  profile_in_use: 409,
  last_admin: 409,
  key_revoked: 409,
  upstream_authorization_required: 409,
  service_not_oauth: 409,
  oauth_client_required: 409,
  oauth_still_required: 409,
  oauth_not_configured: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  too_many_tools: 413,
  too_many_profiles: 413,
  too_many_services: 413,
  too_many_keys: 413,
  too_many_members: 413,
  too_many_tool_policies: 413,
  tool_list_too_large: 413,
  workspace_tools_too_large: 413,
  source_too_large: 413,
  config_too_large: 413,
  compiled_too_large: 413,
  history_full: 413,
  deployed_code_full: 413,
  unsupported_media_type: 415,
  compile_failed: 422,
  declarations_too_large: 422,
  precondition_required: 428,
  rate_limited: 429,
  internal_error: 500,
  upstream_unreachable: 502,
  upstream_protocol_error: 502,
  upstream_response_too_large: 502,
  oauth_discovery_failed: 502,
  oauth_metadata_invalid: 502,
  oauth_token_request_failed: 502,
  compiler_unavailable: 503,
  workspace_unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

/** The codes in table order; non-empty, as `z.enum` needs. */
export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** The codes answered with `status`, in table order. */
export const codesWithStatus = (status: number): ErrorCode[] => ERROR_CODES.filter((code) => ERROR_STATUS[code] === status);
