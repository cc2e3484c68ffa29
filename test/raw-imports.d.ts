/** Vite's `?raw` imports: a file's text, used by tests that hold documentation to the code. */
declare module "*?raw" {
  const text: string;
  export default text;
}
