import { defaultContentModes, type ServiceContentModes } from "../policy/service-policies.store.ts";
import { isListed } from "./access.ts";
import type { Catalog, CatalogService } from "./catalog.ts";

export type ContentKind = keyof ServiceContentModes;

const NOTHING: ServiceContentModes = { resources: "block", prompts: "block" };

/**
 * The profile's modes for one service's resources and prompts. A key without a
 * profile sees nothing, and neither does anyone while the service waits for
 * upstream authorization (its tools are not callable either).
 */
export function contentModes(catalog: Catalog, profileId: string | null, service: CatalogService): ServiceContentModes {
  const profile = profileId ? catalog.profiles.get(profileId) : undefined;
  if (!profile || service.requiresAuthorization) return NOTHING;
  return profile.serviceModes.get(service.id) ?? defaultContentModes(profile.defaultMode);
}

/** The service behind a slug when this profile may use its resources (or prompts); else null, as for an unknown slug. */
export function serviceFor(catalog: Catalog, profileId: string | null, slug: string, kind: ContentKind): CatalogService | null {
  const service = catalog.services.get(slug);
  if (!service) return null;
  return contentModes(catalog, profileId, service)[kind] === "allow" ? service : null;
}

/** Whether the service blocks this kind for the profile (it exists, the profile may not see it): worth a log row. */
export function isBlocked(catalog: Catalog, profileId: string | null, slug: string, kind: ContentKind): CatalogService | null {
  const service = catalog.services.get(slug);
  return service && contentModes(catalog, profileId, service)[kind] === "block" ? service : null;
}

/** Services, in slug order, whose resources (or prompts) this profile may use. */
export function servicesWith(catalog: Catalog, profileId: string | null, kind: ContentKind): CatalogService[] {
  return [...catalog.services.values()].filter((service) => contentModes(catalog, profileId, service)[kind] === "allow");
}

/** A service is visible to a profile when it lists one of its tools, or allows its resources or prompts. */
export function visibleServices(catalog: Catalog, profileId: string | null): CatalogService[] {
  const withTools = new Set<string>();
  for (const tool of catalog.tools.values()) if (isListed(catalog, profileId, tool)) withTools.add(tool.serviceId);
  return [...catalog.services.values()].filter((service) => {
    const modes = contentModes(catalog, profileId, service);
    return withTools.has(service.id) || modes.resources === "allow" || modes.prompts === "allow";
  });
}
