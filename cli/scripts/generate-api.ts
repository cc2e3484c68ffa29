// `npm run api:generate`: starts the Worker locally, saves its OpenAPI document
// and regenerates the CLI's API types from it.
import { writeFileSync } from "node:fs";
import { startGateway } from "../../test/node/gateway.ts";
import { documentPath, documentText, typesPath, typesText } from "./api-types.ts";

const gateway = await startGateway();
try {
  const document = (await (await fetch(`${gateway.origin}/v1/openapi.json`)).json()) as object;
  writeFileSync(documentPath, await documentText(document));
  writeFileSync(typesPath, await typesText(document));
  console.log(`wrote ${documentPath} and ${typesPath}`);
} finally {
  await gateway.stop();
}
