// A DPoP client made with `jose` (oidc-provider's own JOSE library), against oidc-provider and
// our resource server (`switchboard serve --auth-issuer ... --auth-dpop`): it obtains a
// DPoP-bound token (client credentials), calls the endpoint with a proof (meeting the
// server's nonce challenge once), then sends forged and replayed proofs, each of which must be
// refused for its reason. Prints `PASS name` / `FAIL name: why`, exits 1 on any failure.
//
//   node interop/oauth/dpop-peer.mjs --issuer URL --url RESOURCE_URL
import { createHash, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';

const { values } = parseArgs({ options: { issuer: { type: 'string' }, url: { type: 'string' } } });
const { issuer, url } = values;
if (!issuer || !url) throw new Error('--issuer and --url are needed');
let failed = 0;
const pass = (name) => console.log(`PASS ${name}`);
const fail = (name, why) => {
  console.log(`FAIL ${name}: ${why}`);
  failed += 1;
};
const b64 = (b) => Buffer.from(b).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

const key = await generateKeyPair('ES256');
const jwk = await exportJWK(key.publicKey);
const jkt = await calculateJwkThumbprint(jwk);
const other = await generateKeyPair('ES256');
const otherJwk = await exportJWK(other.publicKey);

async function proof(claims, { priv = key.privateKey, pub = jwk, alg = 'ES256' } = {}) {
  return new SignJWT({ jti: randomUUID(), iat: now(), ...claims })
    .setProtectedHeader({ typ: 'dpop+jwt', alg, jwk: pub })
    .sign(priv);
}

// The token: client credentials, bound by the proof on the token request.
const tokenUrl = `${issuer}/token`;
const basic = Buffer.from('switchboard-machine:switchboard-machine-secret').toString('base64');
const res = await fetch(tokenUrl, {
  method: 'POST',
  headers: {
    authorization: `Basic ${basic}`,
    'content-type': 'application/x-www-form-urlencoded',
    dpop: await proof({ htm: 'POST', htu: tokenUrl }),
  },
  body: new URLSearchParams({ grant_type: 'client_credentials', resource: url, scope: 'mcp:basic' }),
});
const grant = await res.json();
if (grant.token_type !== 'DPoP') throw new Error(`no DPoP-bound token: ${JSON.stringify(grant)}`);
const token = grant.access_token;
const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url'));
if (claims.cnf?.jkt !== jkt) throw new Error(`the token is not bound to our key: ${JSON.stringify(claims)}`);
pass('oidc-provider issued a DPoP-bound token (token_type DPoP, cnf.jkt our key)');
const ath = createHash('sha256').update(token).digest('base64url');

const body = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'dpop-peer', version: '1' } },
});
let nonce;
async function send(dpop, scheme = 'DPoP', method = 'POST') {
  const headers = {
    authorization: `${scheme} ${token}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  if (dpop) headers.dpop = dpop;
  const r = await fetch(url, { method, headers, body: method === 'POST' ? body : undefined });
  const n = r.headers.get('dpop-nonce');
  if (n) nonce = n;
  await r.arrayBuffer();
  return { status: r.status, challenge: r.headers.get('www-authenticate') ?? '' };
}
const good = (extra = {}) => ({ htm: 'POST', htu: url, ath, ...(nonce ? { nonce } : {}), ...extra });

// The nonce challenge, met once.
let first = await send(await proof(good()));
if (first.status === 401 && first.challenge.includes('use_dpop_nonce') && nonce) {
  pass('the resource asked for a nonce (use_dpop_nonce, DPoP-Nonce)');
} else {
  fail('nonce challenge', `${first.status} ${first.challenge}`);
}
const served = await proof(good());
first = await send(served);
if (first.status === 200) pass('a proof with the nonce is served');
else fail('served', `${first.status} ${first.challenge}`);

async function refused(name, dpop, error, why, scheme) {
  const r = await send(dpop, scheme);
  if (r.status === 401 && r.challenge.startsWith('DPoP') && r.challenge.includes(`error="${error}"`) &&
      r.challenge.includes(why)) {
    pass(`refused: ${name}`);
  } else {
    fail(name, `${r.status} ${r.challenge}`);
  }
}
await refused('a replayed proof', served, 'invalid_dpop_proof', 'replayed');
await refused('wrong htm', await proof(good({ htm: 'GET' })), 'invalid_dpop_proof', 'htm');
await refused('wrong htu', await proof(good({ htu: `${url}/other` })), 'invalid_dpop_proof', 'htu');
await refused('stale iat', await proof(good({ iat: now() - 600 })), 'invalid_dpop_proof', 'too old');
const { ath: _drop, ...noAth } = good();
await refused('missing ath', await proof(noAth), 'invalid_dpop_proof', 'ath');
await refused('a key that does not match cnf.jkt',
  await proof(good(), { priv: other.privateKey, pub: otherJwk }), 'invalid_token', 'bound to');
const unsigned = `${b64(JSON.stringify({ typ: 'dpop+jwt', alg: 'none', jwk }))}.${b64(JSON.stringify({ jti: randomUUID(), iat: now(), ...good() }))}.`;
await refused('alg none', unsigned, 'invalid_dpop_proof', 'alg none');
await refused('an HMAC proof', await proof(good(), { priv: new TextEncoder().encode('k'.repeat(32)), alg: 'HS256' }),
  'invalid_dpop_proof', 'alg HS256');
await refused('the bound token as a bearer', undefined, 'invalid_token', 'DPoP scheme', 'Bearer');
await refused('the bound token as a bearer, with a proof', await proof(good()), 'invalid_token', 'DPoP scheme', 'Bearer');

console.log(`${failed ? 'FAIL' : 'PASS'} dpop-peer: ${failed} failed`);
process.exit(failed ? 1 : 0);
