// Deployed, the console and its API share one origin: this Pages Function
// forwards every /v1/* request, unchanged, to the gateway Worker through a
// service binding (no public hop, no CORS). Cloudflare Access guards the
// console's hostname and adds its signed `Cf-Access-Jwt-Assertion` header to
// each request; the gateway verifies that header itself, so this function
// holds no secret and makes no decision. The browser's `Origin` and
// `Sec-Fetch-Site` reach the gateway unchanged too: its CSRF check refuses a
// state-changing request the session signs unless it comes from this origin.
interface ConsoleEnv {
  /** The gateway Worker (`rayrun`), bound in console/wrangler.toml. */
  GATEWAY: Fetcher;
}

export const onRequest: PagesFunction<ConsoleEnv> = ({ request, env }) => env.GATEWAY.fetch(request);
