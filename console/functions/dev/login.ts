// The local dev login, forwarded like /v1 so the console signs in the same way
// on `wrangler pages dev`. A deployed gateway has DEV_LOGIN off and answers 404,
// and the console then tells the user to sign in through Cloudflare Access.
export const onRequestPost: PagesFunction<{ GATEWAY: Fetcher }> = ({ request, env }) => env.GATEWAY.fetch(request);
