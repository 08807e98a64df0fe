/** JSON Schema (2020-12) of a trust root payload (`_type: ringfence/root`). */
export const ROOT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:ringfence:schema:root:1',
  title: 'ringfence trust root',
  type: 'object',
  additionalProperties: false,
  required: ['_type', 'spec_version', 'version', 'expires', 'keys', 'roles'],
  properties: {
    _type: { const: 'ringfence/root' },
    spec_version: { const: 1 },
    version: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
    expires: { type: 'string', format: 'date-time' },
    keys: {
      type: 'object',
      minProperties: 1,
      maxProperties: 256,
      propertyNames: { pattern: '^[0-9a-f]{64}$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['keytype', 'public'],
        properties: { keytype: { const: 'ed25519' }, public: { type: 'string', maxLength: 64 } },
      },
    },
    roles: {
      type: 'object',
      additionalProperties: false,
      required: ['root', 'policy'],
      properties: { root: { $ref: '#/$defs/role' }, policy: { $ref: '#/$defs/role' } },
    },
  },
  $defs: {
    role: {
      type: 'object',
      additionalProperties: false,
      required: ['keyids', 'threshold'],
      properties: {
        keyids: {
          type: 'array',
          minItems: 1,
          maxItems: 256,
          uniqueItems: true,
          items: { type: 'string', pattern: '^[0-9a-f]{64}$' },
        },
        threshold: { type: 'integer', minimum: 1, maximum: 256 },
      },
    },
  },
} as const;
