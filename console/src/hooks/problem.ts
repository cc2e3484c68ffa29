/** A problem in the text, 1-based as editors count, and which check found it (`typescript`, `shape`, `compile`). */
export interface Problem {
  line: number;
  column: number;
  message: string;
  source: string;
}
