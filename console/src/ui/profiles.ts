import { api, call, type Schemas } from "../api.ts";
import { useLoad } from "./load.ts";

/** The workspace's access profiles, which keys and tool policies refer to. */
export function useProfiles(ws: string) {
  return useLoad<Schemas["AccessProfile"][]>(
    async () => (await call(api.GET("/v1/workspaces/{ws}/profiles", { params: { path: { ws } } }))).profiles,
    [ws],
  );
}
