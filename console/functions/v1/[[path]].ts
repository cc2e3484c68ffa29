// Deployed, the console and its API share one origin: this Pages Function
// forwards every /v1/* request, unchanged, to the gateway Worker through a
// service binding (no public hop, no CORS). Cloudflare Access guards the
// console's hostname and adds its signed `Cf-Access-Jwt-Assertion` header to
// each request; the gateway verifies that header itself, so this function
// holds no secret and makes no decision.
interface ConsoleEnv {
  /** The gateway Worker (`rayrun`), bound in console/wrangler.toml. */
  GATEWAY: Fetcher;
}

export const onRequest: PagesFunction<ConsoleEnv> = ({ request, env }) => env.GATEWAY.fetch(request);
