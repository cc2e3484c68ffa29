/** What every workspace screen receives from the router. */
export interface ScreenProps {
  ws: string;
  /** Path segments after the screen's name. */
  rest: string[];
}
