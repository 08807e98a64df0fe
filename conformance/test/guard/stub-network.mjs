// Test double for the network, preloaded before the guard: it records every destination the
// process tries and lets only loopback ones through, so a guard that failed open is seen here
// and still sends nothing off this machine.
import dns from 'node:dns';
import net from 'node:net';

globalThis.reached = [];
const loopback = (host) => /^(127\.|localhost$|::1$|\[::1\]$)/.test(String(host));
const realConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function stubConnect(...args) {
  const options = Array.isArray(args[0]) ? args[0][0] : args[0];
  const host = typeof options === 'object' ? (options.host ?? 'localhost') : (args[1] ?? 'localhost');
  globalThis.reached.push(`connect ${host}`);
  if (loopback(host)) return realConnect.apply(this, args);
  process.nextTick(() => this.destroy(new Error('stub: not connected')));
  return this;
};
const realLookup = dns.lookup;
dns.lookup = (hostname, ...rest) => {
  globalThis.reached.push(`lookup ${hostname}`);
  if (loopback(hostname)) return realLookup(hostname, ...rest);
  process.nextTick(() => rest.findLast((a) => typeof a === 'function')(new Error('stub: no lookup')));
};
const realLookupPromise = dns.promises.lookup;
dns.promises.lookup = async (hostname, ...rest) => {
  globalThis.reached.push(`lookup ${hostname}`);
  if (loopback(hostname)) return realLookupPromise(hostname, ...rest);
  throw new Error('stub: no lookup');
};
const resolve4 = (name) => {
  globalThis.reached.push(`resolve4 ${name}`);
  throw new Error('stub: no query');
};
dns.resolve4 = resolve4;
dns.promises.resolve4 = async (name) => resolve4(name);
dns.Resolver.prototype.resolve4 = resolve4;
