// The local dev sign-out, forwarded like /dev/login. A deployed gateway answers 404,
// and the console then signs out of Cloudflare Access at /cdn-cgi/access/logout.
export const onRequestPost: PagesFunction<{ GATEWAY: Fetcher }> = ({ request, env }) => env.GATEWAY.fetch(request);
