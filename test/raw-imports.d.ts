/** Vite's `?raw` imports: the file's text (tests read docs/errors.md this way). */
declare module "*?raw" {
  const text: string;
  export default text;
}
