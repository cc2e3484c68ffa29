/**
 * The JSON Schema 2020-12 meta-schema (core, applicator, unevaluated,
 * validation, meta-data, format-annotation and content vocabularies, plus the
 * deprecated keywords the official meta-schema still describes), flattened into
 * one schema. The official one recurses with `$dynamicRef`, which
 * @cfworker/json-schema does not implement; with no extension vocabularies the
 * dynamic reference always lands on the root, so a plain `$ref: "#"` checks the
 * same thing.
 */
export const JSON_SCHEMA_2020_12_METASCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    schemaArray: { type: "array", minItems: 1, items: { $ref: "#" } },
    schemaMap: { type: "object", additionalProperties: { $ref: "#" } },
    nonNegativeInteger: { type: "integer", minimum: 0 },
    nonNegativeIntegerDefault0: { $ref: "#/$defs/nonNegativeInteger", default: 0 },
    simpleTypes: { enum: ["array", "boolean", "integer", "null", "number", "object", "string"] },
    stringArray: { type: "array", items: { type: "string" }, uniqueItems: true, default: [] },
    anchorString: { type: "string", pattern: "^[A-Za-z_][-A-Za-z0-9._]*$" },
    uriReferenceString: { type: "string", format: "uri-reference" },
  },
  type: ["object", "boolean"],
  properties: {
    // core
    // Fixed patterns of our own, not hook-controlled; both match in linear time.
    $id: { $ref: "#/$defs/uriReferenceString", $comment: "Non-empty fragments not allowed.", pattern: "^[^#]*#?$" },
    $schema: { type: "string", format: "uri" },
    $ref: { $ref: "#/$defs/uriReferenceString" },
    $anchor: { $ref: "#/$defs/anchorString" },
    $dynamicRef: { $ref: "#/$defs/uriReferenceString" },
    $dynamicAnchor: { $ref: "#/$defs/anchorString" },
    $vocabulary: { type: "object", additionalProperties: { type: "boolean" } },
    $comment: { type: "string" },
    $defs: { $ref: "#/$defs/schemaMap" },
    // applicator
    prefixItems: { $ref: "#/$defs/schemaArray" },
    items: { $ref: "#" },
    contains: { $ref: "#" },
    additionalProperties: { $ref: "#" },
    properties: { $ref: "#/$defs/schemaMap", default: {} },
    patternProperties: { type: "object", additionalProperties: { $ref: "#" }, default: {} },
    dependentSchemas: { $ref: "#/$defs/schemaMap", default: {} },
    propertyNames: { $ref: "#" },
    if: { $ref: "#" },
    then: { $ref: "#" },
    else: { $ref: "#" },
    allOf: { $ref: "#/$defs/schemaArray" },
    anyOf: { $ref: "#/$defs/schemaArray" },
    oneOf: { $ref: "#/$defs/schemaArray" },
    not: { $ref: "#" },
    // unevaluated
    unevaluatedItems: { $ref: "#" },
    unevaluatedProperties: { $ref: "#" },
    // validation
    type: {
      anyOf: [{ $ref: "#/$defs/simpleTypes" }, { type: "array", items: { $ref: "#/$defs/simpleTypes" }, minItems: 1, uniqueItems: true }],
    },
    const: true,
    enum: { type: "array", items: true },
    multipleOf: { type: "number", exclusiveMinimum: 0 },
    maximum: { type: "number" },
    exclusiveMaximum: { type: "number" },
    minimum: { type: "number" },
    exclusiveMinimum: { type: "number" },
    maxLength: { $ref: "#/$defs/nonNegativeInteger" },
    minLength: { $ref: "#/$defs/nonNegativeIntegerDefault0" },
    pattern: { type: "string", format: "regex" },
    maxItems: { $ref: "#/$defs/nonNegativeInteger" },
    minItems: { $ref: "#/$defs/nonNegativeIntegerDefault0" },
    uniqueItems: { type: "boolean", default: false },
    maxContains: { $ref: "#/$defs/nonNegativeInteger" },
    minContains: { $ref: "#/$defs/nonNegativeInteger", default: 1 },
    maxProperties: { $ref: "#/$defs/nonNegativeInteger" },
    minProperties: { $ref: "#/$defs/nonNegativeIntegerDefault0" },
    required: { $ref: "#/$defs/stringArray" },
    dependentRequired: { type: "object", additionalProperties: { $ref: "#/$defs/stringArray" } },
    // meta-data
    title: { type: "string" },
    description: { type: "string" },
    default: true,
    deprecated: { type: "boolean", default: false },
    readOnly: { type: "boolean", default: false },
    writeOnly: { type: "boolean", default: false },
    examples: { type: "array", items: true },
    // format-annotation
    format: { type: "string" },
    // content
    contentEncoding: { type: "string" },
    contentMediaType: { type: "string" },
    contentSchema: { $ref: "#" },
    // deprecated keywords kept by the official meta-schema
    definitions: { $ref: "#/$defs/schemaMap" },
    dependencies: { type: "object", additionalProperties: { anyOf: [{ $ref: "#" }, { $ref: "#/$defs/stringArray" }] } },
    $recursiveAnchor: { type: "boolean" },
    $recursiveRef: { $ref: "#/$defs/uriReferenceString" },
  },
} as const;
