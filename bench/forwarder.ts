// The floor for one Worker hop: passes each request's bytes to the upstream and
// the response back, untouched. `npm run bench` runs it under wrangler dev exactly
// as it runs the gateway, so the difference between them is the gateway's own cost.
interface ForwarderEnv {
  UPSTREAM_ORIGIN: string;
}

export default {
  async fetch(request: Request, env: ForwarderEnv): Promise<Response> {
    const url = new URL(request.url);
    return fetch(`${env.UPSTREAM_ORIGIN}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    });
  },
};
