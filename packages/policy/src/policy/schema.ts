/**
 * The JSON Schema (2020-12) of a policy payload. The published copy in
 * `policies/policy.schema.json` is generated from this object (`npm run schema` in this package)
 * and a test fails if the two drift apart.
 */
export const POLICY_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:ringfence:schema:policy:1',
  title: 'ringfence organisation policy',
  description:
    'The payload of a signed ringfence policy (DSSE payloadType application/vnd.ringfence.policy+json). Unknown fields are refused.',
  type: 'object',
  additionalProperties: false,
  required: ['_type', 'spec_version', 'name', 'version', 'issued_at', 'expires', 'default_action'],
  properties: {
    _type: { const: 'ringfence/policy' },
    spec_version: { const: 1 },
    name: {
      description: 'Policy name; rollback protection keeps the highest version seen per name.',
      type: 'string',
      pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
    },
    version: { description: 'Only goes up.', type: 'integer', minimum: 1, maximum: 9007199254740991 },
    issued_at: { type: 'string', format: 'date-time' },
    expires: { type: 'string', format: 'date-time' },
    default_egress: {
      description: 'Network ceiling for servers the policy lists no hosts for. Default deny.',
      enum: ['deny', 'any'],
    },
    allowed_mcp: {
      description: 'Images that may run as servers. Empty or absent means any.',
      type: 'array',
      maxItems: 10000,
      uniqueItems: true,
      items: { $ref: '#/$defs/imageRef' },
    },
    mcp: { type: 'array', maxItems: 10000, items: { $ref: '#/$defs/server' } },
    default_action: { $ref: '#/$defs/action' },
    refuse_invisible_arguments: {
      description:
        "Refuse every call whose arguments hold a character people are shown escaped: control characters but newline and tab, format characters (zero-width, bidi, TAG), variation selectors, spaces other than U+0020, private-use and unassigned code points (docs/untrusted-text.md). A rule's refuse_invisible overrides it for the calls that rule decides. Default false.",
      type: 'boolean',
    },
    first_sight: {
      description:
        'What the gateway does with the definitions of a server it has never pinned: "pin" exposes and pins them at once (trust on first use), "withhold" withholds every one until a person reviews the whole definitions and approves them at a terminal (ringfence mcp pins approve SERVER). An mcp[] entry\'s first_sight overrides it for that server; a local registration (mcp add --review-first) can only make it stricter. Default "pin".',
      $ref: '#/$defs/firstSight',
    },
    rules: { type: 'array', maxItems: 10000, items: { $ref: '#/$defs/rule' } },
    oauth: {
      description:
        "OAuth remote servers (mcp add --oauth): the authorization servers a login may use. An mcp[] entry's oauth overrides it for that server. Absent: any authorization server.",
      $ref: '#/$defs/oauth',
    },
  },
  $defs: {
    oauth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        authorization_servers: {
          description:
            "Issuer identifiers (exactly as the authorization server's metadata spells its issuer) a login may use; an empty list allows none. A listed issuer may also name token, registration and revocation endpoints on another origin than its own.",
          type: 'array',
          maxItems: 1000,
          uniqueItems: true,
          items: { $ref: '#/$defs/issuer' },
        },
      },
    },
    issuer: {
      description: 'An https URL (plain http on a loopback host only), no query or fragment.',
      type: 'string',
      maxLength: 2048,
      pattern:
        '^(https://[^\\s?#/@]+|http://(127\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}|localhost|\\[::1\\])(:[0-9]{1,5})?)(/[^\\s?#]*)?$',
    },
    action: { enum: ['allow', 'deny', 'ask'] },
    firstSight: { enum: ['pin', 'withhold'] },
    serverName: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,31}$' },
    toolName: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,128}$' },
    promptName: {
      description: 'A prompt as its server lists it; the same alphabet as tool names.',
      type: 'string',
      pattern: '^[A-Za-z0-9_.-]{1,128}$',
    },
    resourceUri: {
      description:
        'A resource as its server lists it (its URI), or a resource template (its URI template), exactly as the server spells it.',
      type: 'string',
      minLength: 1,
      maxLength: 2048,
    },
    digest: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
    imageRef: {
      description:
        'An image name (matched exactly, case-insensitively), name@sha256:<64 hex>, or a bare image id.',
      type: 'string',
      maxLength: 512,
      anyOf: [
        { pattern: '^(?!sha256:)[^\\s@]+(@sha256:[0-9a-f]{64})?$' },
        { pattern: '^sha256:[0-9a-f]{64}$' },
      ],
    },
    host: {
      description: 'host, *.domain, optionally :port; lower case.',
      type: 'string',
      maxLength: 260,
      pattern: '^(\\*\\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$',
    },
    server: {
      type: 'object',
      additionalProperties: false,
      required: ['server'],
      properties: {
        server: { $ref: '#/$defs/serverName' },
        allow_tools: {
          description: 'Absent: no restriction from the policy. Empty: no tool allowed.',
          type: 'array',
          maxItems: 10000,
          uniqueItems: true,
          items: { $ref: '#/$defs/toolName' },
        },
        pins: {
          description:
            'When present, the only pins that count for this server: each tool, prompt, resource (by URI) or resource template (by URI template) it lists, and its instructions ({"instructions": true}), is exposed only with the digest pinned here.',
          type: 'array',
          maxItems: 10000,
          items: {
            oneOf: [
              {
                type: 'object',
                additionalProperties: false,
                required: ['tool', 'digest'],
                properties: { tool: { $ref: '#/$defs/toolName' }, digest: { $ref: '#/$defs/digest' } },
              },
              {
                type: 'object',
                additionalProperties: false,
                required: ['prompt', 'digest'],
                properties: { prompt: { $ref: '#/$defs/promptName' }, digest: { $ref: '#/$defs/digest' } },
              },
              {
                type: 'object',
                additionalProperties: false,
                required: ['resource', 'digest'],
                properties: { resource: { $ref: '#/$defs/resourceUri' }, digest: { $ref: '#/$defs/digest' } },
              },
              {
                type: 'object',
                additionalProperties: false,
                required: ['template', 'digest'],
                properties: { template: { $ref: '#/$defs/resourceUri' }, digest: { $ref: '#/$defs/digest' } },
              },
              {
                type: 'object',
                additionalProperties: false,
                required: ['instructions', 'digest'],
                properties: { instructions: { const: true }, digest: { $ref: '#/$defs/digest' } },
              },
            ],
          },
        },
        egress_allow: {
          description: 'The most network access this server may be given.',
          type: 'array',
          maxItems: 1000,
          uniqueItems: true,
          items: { $ref: '#/$defs/host' },
        },
        read_only_tools: {
          type: 'array',
          maxItems: 10000,
          uniqueItems: true,
          items: { $ref: '#/$defs/toolName' },
        },
        max_call_seconds: {
          description:
            'The longest one tool call to this server may run, progress or not. Absent: no cap beyond the server entry.',
          type: 'integer',
          minimum: 1,
          maximum: 86400,
        },
        allow_sampling: {
          description:
            'The server may ask the model through the client (sampling/createMessage), when its registration allows it too. Absent: no.',
          type: 'boolean',
        },
        allow_elicitation: {
          description:
            'The server may ask the person questions through the client (elicitation/create), when its registration allows it too. Absent: no.',
          type: 'boolean',
        },
        oauth: {
          description:
            "For this server, overrides the policy's oauth: the authorization servers its login may use.",
          $ref: '#/$defs/oauth',
        },
        first_sight: {
          description:
            'For this server, overrides the policy\'s first_sight: "withhold" keeps its definitions from clients until a person approves them, "pin" trusts them on first use (a local --review-first still withholds). Absent: the policy\'s first_sight.',
          $ref: '#/$defs/firstSight',
        },
      },
    },
    rule: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'action'],
      properties: {
        id: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' },
        match: {
          description:
            'A rule naming a tool never matches a prompt, and one naming a prompt never matches a tool; a rule naming neither matches both.',
          type: 'object',
          additionalProperties: false,
          properties: {
            server: { $ref: '#/$defs/serverName' },
            tool: { $ref: '#/$defs/toolName' },
            prompt: { $ref: '#/$defs/promptName' },
            agent: { type: 'string', minLength: 1, maxLength: 128 },
            scope: { type: 'string', minLength: 1, maxLength: 128 },
          },
        },
        when: { type: 'array', maxItems: 64, items: { $ref: '#/$defs/condition' } },
        action: { $ref: '#/$defs/action' },
        reason: { type: 'string', maxLength: 1000 },
        refuse_invisible: {
          description:
            "For the calls this rule decides: true refuses arguments holding invisible characters, false lets them through even under refuse_invisible_arguments. Absent: the policy's refuse_invisible_arguments.",
          type: 'boolean',
        },
      },
    },
    pointer: {
      description: 'RFC 6901 JSON Pointer into the call arguments.',
      type: 'string',
      maxLength: 1024,
      pattern: '^(/([^~/]|~[01])*)*$',
    },
    condition: {
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['arg', 'equals'],
          properties: { arg: { $ref: '#/$defs/pointer' }, equals: true },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['arg', 'in'],
          properties: { arg: { $ref: '#/$defs/pointer' }, in: { type: 'array', maxItems: 1000 } },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['arg', 'glob'],
          properties: { arg: { $ref: '#/$defs/pointer' }, glob: { type: 'string', maxLength: 1024 } },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['arg', 'exists'],
          properties: { arg: { $ref: '#/$defs/pointer' }, exists: { type: 'boolean' } },
        },
      ],
    },
  },
} as const;
