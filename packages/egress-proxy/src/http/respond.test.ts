import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { refuseRaw } from './respond.js';

/** The body of the refusal written on a raw socket. */
function refusal(status: number, reason: string): Promise<string> {
  const socket = new PassThrough();
  let written = '';
  socket.on('data', (chunk: Buffer) => {
    written += chunk.toString();
  });
  return new Promise((resolve) => {
    socket.on('end', () => resolve(written.slice(written.indexOf('\r\n\r\n') + 4)));
    refuseRaw(socket, status, reason);
  });
}

describe('refusal bodies say what happened and what to do', () => {
  it.each([
    [
      403,
      'not-allowlisted',
      /not on this server's egress allowlist.*ringfence mcp rm NAME, then ringfence mcp add NAME … --egress-allow HOST\[:PORT\]/,
    ],
    [403, 'port-not-allowed', /--egress-allow HOST\[:PORT\]/],
    [403, 'ip-literal', /host names only.*Use the host's name.*--egress-allow HOST\)/],
    [403, 'forbidden-address:private', /internal address \(private\).*--egress-allow-address CIDR/],
    [400, 'bad-framing', /not one this proxy forwards\. Send HTTPS as CONNECT HOST:PORT.*HTTPS_PROXY/],
    [400, 'not-a-proxy-request', /absolute form \(GET http:\/\/HOST\/PATH\)/],
    [408, 'header-timeout', /did not arrive in time\. Send the whole head at once/],
    [417, 'expectation-refused', /Send the request without that Expect header/],
    [429, 'tunnel-limit', /Close idle connections, or retry/],
    [431, 'too-many-headers', /over 16 KiB or 100 header fields\. Send fewer or shorter headers/],
    [502, 'dns-failure', /could not be reached.*Check the host name/],
    [504, 'connect-timeout', /could not be reached.*Check the host name/],
    [502, 'internal-error', /the proxy failed on this request, not the host\. Retry.*internal-error event/],
  ])('%i %s', async (status, reason, next) => {
    const body = await refusal(status, reason);
    expect(body.startsWith(`ringfence-egress-proxy: refused (${reason}): `)).toBe(true);
    expect(body).toMatch(next);
    expect(body.endsWith('.\n')).toBe(true);
  });
});
