/**
 * Tool names an upstream may list (the demo upstream's `/fixtures/hostile-names`): some MCP does not allow (none, a
 * space, a slash and markup, a letter past ASCII, one that makes a public name past 128 characters under the slug
 * `names`), beside some it does (a dot; 121 characters, 128 with `names__`).
 */
export const HOSTILE_NAMES = ["plain", "", "a b/../<script>", "dotted.name", "y".repeat(121), "x".repeat(122), "ünïcode"];
export const INVALID_HOSTILE_NAMES = ["", "a b/../<script>", "x".repeat(122), "ünïcode"];
