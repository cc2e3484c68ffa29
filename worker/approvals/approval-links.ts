/**
 * Where an approval is decided, as the agent is told in `approval_required`: `approveAt`, the console page
 * that shows the approval (after sign-in) with Approve and Deny, and `approveApi`, the REST route an admin
 * key POSTs to (what `approveAt` was before the console had the page).
 */
export interface ApprovalLinks {
  /** `<console>/#/w/<ws>/approvals`: an approval's page is this plus `/<id>`. */
  pages: string;
  /** `<gateway>/v1/workspaces/<ws>/approvals`: approving is a POST to this plus `/<id>/approve`. */
  api: string;
}

/**
 * CONSOLE_URL is where the console is served (a Cloudflare Pages site deployed); empty, the gateway's own
 * origin, which serves the console under `npm start`. A value that is not an http(s) URL counts as empty.
 */
export function approvalLinks(env: Pick<Env, "CONSOLE_URL">, gatewayOrigin: string, workspaceId: string): ApprovalLinks {
  const ws = encodeURIComponent(workspaceId);
  return {
    pages: `${consoleBase(env.CONSOLE_URL, gatewayOrigin)}/#/w/${ws}/approvals`,
    api: `${gatewayOrigin}/v1/workspaces/${ws}/approvals`,
  };
}

function consoleBase(configured: string | undefined, gatewayOrigin: string): string {
  if (!configured) return gatewayOrigin;
  try {
    const url = new URL(configured);
    if (url.protocol !== "https:" && url.protocol !== "http:") return gatewayOrigin;
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  } catch {
    return gatewayOrigin;
  }
}

/** The two links for one approval, as `approval_required` details carry them. */
export const linksFor = (links: ApprovalLinks, approvalId: string) => ({
  approveAt: `${links.pages}/${encodeURIComponent(approvalId)}`,
  approveApi: `${links.api}/${encodeURIComponent(approvalId)}/approve`,
});
