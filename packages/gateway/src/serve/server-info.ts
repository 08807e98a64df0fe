/** How the gateway names itself to clients (initialize) and in its `gateway.start` audit entry. */
export const SERVER_INFO = { name: 'ringfence', version: '0.1.0' } as const;
