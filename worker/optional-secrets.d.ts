// Secrets a deployment may leave unset. `wrangler types` types only the required ones (wrangler.toml [secrets]),
// and a required secret must be set for every deploy, so the optional ones are declared here.
interface OptionalSecrets {
  /** OTLP exporter headers, `name=value,…` (OpenTelemetry's format); read only by worker/logs/otel-export.ts. */
  OTEL_EXPORTER_OTLP_HEADERS?: string;
}
declare namespace Cloudflare {
  interface Env extends OptionalSecrets {}
}
interface Env extends OptionalSecrets {}
