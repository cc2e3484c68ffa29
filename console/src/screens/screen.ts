/** What every workspace screen receives from the router. */
export interface ScreenProps {
  ws: string;
  /** Path segments after the screen's name. */
  rest: string[];
  /** The hash's query: a screen's filters. */
  query: URLSearchParams;
}
