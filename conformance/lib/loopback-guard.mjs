// Preloaded into the conformance suite's Node (`node --import` this file): the suite may reach
// loopback addresses only. Every TCP connect (net, tls, http, fetch, undici all come through
// net.Socket#connect), every name lookup other than localhost, every DNS resolver query and every
// UDP socket is checked before any packet leaves; a refused attempt fails with an error in the
// suite and is appended to the file named by CONFORMANCE_GUARD_LOG, which the runner reads to
// fail the run. It is a tripwire for a suite that phones home, not a sandbox for hostile code.
import dgram from 'node:dgram';
import dns from 'node:dns';
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import net, { isIP } from 'node:net';

/** Is `host` (an IP literal, possibly bracketed, or a name) a loopback destination? */
export function isLoopbackHost(host) {
  if (typeof host !== 'string') return false;
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === 'localhost.') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./.test(bare);
  return false;
}

/**
 * Where a `socket.connect(...)` call goes: { path } for a local (unix) socket, else { host, port }.
 * Mirrors net's argument forms: (options[, cb]), (path[, cb]), (port[, host][, cb]).
 */
export function connectTarget(args) {
  const [first, second] = args;
  // net.connect(options) hands connect an array [options, cb] (normalised args).
  const options = Array.isArray(first) ? first[0] : first;
  if (options !== null && typeof options === 'object') {
    // net connects to a local socket only for a non-empty path; http's agent passes path: null.
    if (options.path) return { path: options.path };
    return { host: options.host ?? 'localhost', port: options.port };
  }
  if (typeof options === 'string' && !/^\d+$/.test(options)) return { path: options };
  return { host: typeof second === 'string' ? second : 'localhost', port: options };
}

export function installLoopbackGuard({ logFile = process.env.CONFORMANCE_GUARD_LOG } = {}) {
  const refusal = (what) => {
    const message = `conformance loopback guard: refused ${what}: the suite may reach loopback addresses only`;
    if (logFile) appendFileSync(logFile, `${message}\n`);
    process.stderr.write(`${message}\n`);
    return Object.assign(new Error(message), { code: 'ECONNREFUSED_BY_GUARD' });
  };

  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(...args) {
    const target = connectTarget(args);
    if (target.path === undefined && !isLoopbackHost(target.host)) {
      const error = refusal(`a connection to ${target.host}:${target.port}`);
      process.nextTick(() => this.destroy(error));
      return this;
    }
    return connect.apply(this, /** @type {any} */ (args));
  };

  const lookup = dns.lookup;
  /** @type {any} */ (dns).lookup = function guardedLookup(hostname, ...rest) {
    if (!isLoopbackHost(hostname)) {
      const callback = rest.findLast((arg) => typeof arg === 'function');
      const error = refusal(`a lookup of ${hostname}`);
      if (callback) process.nextTick(() => callback(error));
      return {};
    }
    return /** @type {Function} */ (lookup).call(this, hostname, ...rest);
  };
  const lookupPromise = dns.promises.lookup;
  /** @type {any} */ (dns.promises).lookup = async function guardedLookupPromise(hostname, ...rest) {
    if (!isLoopbackHost(hostname)) throw refusal(`a lookup of ${hostname}`);
    return /** @type {Function} */ (lookupPromise).call(this, hostname, ...rest);
  };
  // Resolver queries go to DNS servers, which are never loopback-only: none is allowed. The
  // promise forms reject, as they would on a failed query; the callback forms throw.
  const prototypes = (Resolver) => [Resolver.prototype, Object.getPrototypeOf(Resolver.prototype)];
  const denyAll = (targets, deny) => {
    for (const target of targets) {
      for (const name of Object.getOwnPropertyNames(target)) {
        if (/^resolve|^reverse$/.test(name) && typeof target[name] === 'function') target[name] = deny(name);
      }
    }
  };
  denyAll([dns, ...prototypes(dns.Resolver)], (name) => () => {
    throw refusal(`DNS query ${name}`);
  });
  denyAll([dns.promises, ...prototypes(dns.promises.Resolver)], (name) => async () => {
    throw refusal(`DNS query ${name}`);
  });
  dgram.createSocket = () => {
    throw refusal('a UDP socket');
  };
  // ESM `import { lookup } from 'node:dns'` bindings follow the patched properties only after this.
  syncBuiltinESMExports();
}

if (process.env.CONFORMANCE_GUARD_LOG !== undefined) installLoopbackGuard();
