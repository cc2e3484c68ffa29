import { visibleServices } from "../calls/content-access.ts";
import type { Catalog } from "../calls/catalog.ts";

const GATEWAY_INSTRUCTIONS =
  "Tools, prompts and resources from the services connected to this Rayrun workspace. Tool and prompt names are " +
  "`{service}__{name}`; resource URIs are `rayrun://{service}/{upstream URI}`.";

/**
 * Characters of all services' instructions together in one `initialize`. Each
 * service's text is at most 4,096 characters (cut at indexing); past this total,
 * the remaining services (in slug order) are named but their text is left out.
 */
export const MAX_COMBINED_INSTRUCTIONS_CHARS = 32_768;

/**
 * The gateway's own text, then each service the caller can see that sent
 * instructions, under a heading with its slug. Services the profile cannot see
 * contribute nothing, not even their name.
 */
export function gatewayInstructions(catalog: Catalog, profileId: string | null): string {
  const sections = [GATEWAY_INSTRUCTIONS];
  const omitted: string[] = [];
  let used = 0;
  for (const service of visibleServices(catalog, profileId)) {
    if (!service.instructions) continue;
    if (used + service.instructions.length > MAX_COMBINED_INSTRUCTIONS_CHARS) {
      omitted.push(service.slug);
      continue;
    }
    used += service.instructions.length;
    sections.push(`## Service \`${service.slug}\`\n\n${service.instructions}`);
  }
  if (omitted.length) {
    sections.push(`(Instructions of ${omitted.map((slug) => `\`${slug}\``).join(", ")} left out: instructions_limit.)`);
  }
  return sections.join("\n\n");
}
