import { render } from "preact";
import { App } from "./app.tsx";
// The theme is applied on import, before the first render, so a dark system never flashes light.
import "./ui/theme.ts";
import "./styles.css";

render(<App />, document.getElementById("app")!);
