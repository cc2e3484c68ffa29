/** Compiled bundles of deployment revisions in R2, one immutable object per revision. */

const toolPrefix = (workspaceId: string, toolUid: string) => `bundles/${workspaceId}/${toolUid}/`;

export const bundleKey = (workspaceId: string, toolUid: string, revisionId: string) =>
  `${toolPrefix(workspaceId, toolUid)}${revisionId}.js`;

export async function putBundle(bucket: R2Bucket, key: string, bundle: string, sourceHash: string): Promise<void> {
  await bucket.put(key, bundle, {
    httpMetadata: { contentType: "text/javascript; charset=utf-8" },
    customMetadata: { sourceHash },
  });
}

/**
 * Every bundle key under the tool's prefix, including any a failed revision
 * creation left behind, so a reset leaves nothing in R2.
 */
export async function listToolBundles(bucket: R2Bucket, workspaceId: string, toolUid: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const listing = await bucket.list({ prefix: toolPrefix(workspaceId, toolUid), cursor, limit: 1000 });
    keys.push(...listing.objects.map((object) => object.key));
    cursor = listing.truncated ? listing.cursor : undefined;
  } while (cursor);
  return keys;
}

/** R2 deletes at most 1,000 keys per call. */
export async function deleteBundles(bucket: R2Bucket, keys: readonly string[]): Promise<void> {
  for (let start = 0; start < keys.length; start += 1000) await bucket.delete(keys.slice(start, start + 1000));
}
