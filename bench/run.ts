// `npm run bench`: every performance figure, each printed against a baseline measured in the same run.
import { benchGateway, printGateway } from "./gateway.bench.ts";

printGateway(await benchGateway());
