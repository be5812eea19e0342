// Preload for the conformance suite (`node --import ./listen-localhost.mjs ...`): every TCP server the
// process starts listens on 127.0.0.1 only. The suite's mock servers call `listen(0)` (all
// interfaces) and read `address().port` right after; this rewrites the host of every
// `net.Server#listen` call (http and express servers included; Unix-socket paths and inherited
// handles are left alone) and keeps the bind synchronous: Node resolves a listen host with an
// asynchronous `dns.lookup` even for an IP literal, so during our own `listen` call the lookup of
// 127.0.0.1 answers at once.
import dns from 'node:dns';
import net from 'node:net';

const HOST = '127.0.0.1';
const listen = net.Server.prototype.listen;
const lookup = dns.lookup;
let inListen = false;

dns.lookup = function lookupLocalhostSync(hostname, options, callback) {
  if (inListen && hostname === HOST) {
    const cb = typeof options === 'function' ? options : callback;
    const all = typeof options === 'object' && options !== null && options.all;
    if (all) cb(null, [{ address: HOST, family: 4 }]);
    else cb(null, HOST, 4);
    return {};
  }
  return lookup.apply(this, arguments);
};

const isPort = (v) => typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v));

net.Server.prototype.listen = function listenOnLocalhost(...args) {
  const [first] = args;
  if (first === undefined || first === null || typeof first === 'function') {
    // listen() / listen(cb): a random port on all interfaces.
    args.splice(0, first === undefined || first === null ? 1 : 0, 0, HOST);
  } else if (isPort(first)) {
    // listen(port[, host][, backlog][, cb])
    if (typeof args[1] === 'string') args[1] = HOST;
    else args.splice(1, 0, HOST);
  } else if (
    typeof first === 'object' &&
    first.path === undefined &&
    first.fd === undefined &&
    first._handle === undefined &&
    first.handle === undefined
  ) {
    // listen({port, host, ...}[, cb])
    args[0] = { ...first, host: HOST };
  }
  inListen = true;
  try {
    return listen.apply(this, args);
  } finally {
    inListen = false;
  }
};
