// The audit log's checks of docs/AUDIT.md ("The verifiable log", "Checking the log"), written
// from that page, not from the service's code: RFC 6962 leaf and node hashes, RFC 9162's
// inclusion and consistency verification, C2SP signed notes, checkpoints and cosignatures, a
// log's tree rebuilt from its lines and held against the witness's cosigned checkpoints, and
// c2sp.org/tlog-proof files. WebCrypto only (SHA-256, Ed25519), like proof.mjs.

const UTF8 = new TextEncoder();
const subtle = globalThis.crypto.subtle;
const DASH = '\u2014';

export class LogProblem extends Error {}

const b64 = (bytes) => Buffer.from(bytes).toString('base64');
const unb64 = (text) => {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4) throw new LogProblem('not base64');
  return new Uint8Array(Buffer.from(text, 'base64'));
};
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};
const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const sha256 = async (bytes) => new Uint8Array(await subtle.digest('SHA-256', bytes));

export const leafHash = (leaf) => sha256(concat(new Uint8Array([0]), leaf));
export const nodeHash = (l, r) => sha256(concat(new Uint8Array([1]), l, r));
export const EMPTY_ROOT = () => sha256(new Uint8Array(0));

/** RFC 9162 2.1.3.2: throws unless `leaf` is at `index` of the tree of `size` with `root`. */
export async function verifyInclusion(leaf, index, size, proof, root) {
  if (!(index >= 0 && index < size)) throw new LogProblem('index outside the tree');
  if (leaf.length !== 32 || root.length !== 32) throw new LogProblem('hashes are 32 bytes');
  let fn = BigInt(index); let sn = BigInt(size - 1); let r = leaf;
  for (const p of proof) {
    if (p.length !== 32) throw new LogProblem('a proof hash is not 32 bytes');
    if (sn === 0n) throw new LogProblem('proof too long');
    if ((fn & 1n) || fn === sn) {
      r = await nodeHash(p, r);
      while (!(fn & 1n) && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n; sn >>= 1n;
  }
  if (sn !== 0n) throw new LogProblem('proof too short');
  if (!equal(r, root)) throw new LogProblem('the proof does not lead to the root');
}

/** RFC 9162 2.1.4.2 (a proof from size 0 proves nothing and is refused, as transparency-dev). */
export async function verifyConsistency(old, size, proof, oldRoot, newRoot) {
  if (!(old >= 0 && old <= size)) throw new LogProblem('old size larger than new');
  if (old === 0) throw new LogProblem('a consistency proof from the empty tree proves nothing');
  if (old === size) {
    if (proof.length) throw new LogProblem('equal sizes take an empty proof');
    if (!equal(oldRoot, newRoot)) throw new LogProblem('equal sizes, different roots');
    return;
  }
  if (!proof.length) throw new LogProblem('empty proof');
  if (proof.some((p) => p.length !== 32)) throw new LogProblem('a proof hash is not 32 bytes');
  const path = (old & (old - 1)) === 0 ? [oldRoot, ...proof] : [...proof];
  let fn = BigInt(old - 1); let sn = BigInt(size - 1);
  while (fn & 1n) { fn >>= 1n; sn >>= 1n; }
  let fr = path[0]; let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) throw new LogProblem('proof too long');
    if ((fn & 1n) || fn === sn) {
      fr = await nodeHash(c, fr); sr = await nodeHash(c, sr);
      while (!(fn & 1n) && fn !== 0n) { fn >>= 1n; sn >>= 1n; }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn >>= 1n; sn >>= 1n;
  }
  if (sn !== 0n) throw new LogProblem('proof too short');
  if (!equal(fr, oldRoot)) throw new LogProblem('the proof does not lead to the old root');
  if (!equal(sr, newRoot)) throw new LogProblem('the proof does not lead to the new root');
}

/** The root of the first `size` of `hashes` (RFC 6962 MTH). */
export async function rootOf(hashes, start = 0, end = hashes.length) {
  const n = end - start;
  if (n === 0) return EMPTY_ROOT();
  if (n === 1) return hashes[start];
  let k = 1; while (k * 2 < n) k *= 2;
  return nodeHash(await rootOf(hashes, start, start + k), await rootOf(hashes, start + k, end));
}

/** A note key: name, type (1 Ed25519, 4 cosignature) and 32-byte public key. */
export async function noteKey(name, publicKey, type = 1) {
  const id = (await sha256(concat(UTF8.encode(name + '\n'), new Uint8Array([type]), publicKey)))
    .slice(0, 4);
  return { name, type, publicKey, id };
}

export async function fromVkey(text) {
  const [name, hex, material] = [text.split('+')[0], text.split('+')[1],
    text.split('+').slice(2).join('+')];
  const raw = unb64(material.trim());
  if (raw.length !== 33 || ![1, 4].includes(raw[0])) throw new LogProblem('not an Ed25519 vkey');
  const key = await noteKey(name, raw.slice(1), raw[0]);
  if (Buffer.from(key.id).toString('hex') !== hex) throw new LogProblem('vkey id mismatch');
  return key;
}

async function ed25519Verify(publicKey, signature, message) {
  const key = await subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
  return subtle.verify({ name: 'Ed25519' }, key, signature, message);
}

/** c2sp.org/signed-note: { text, signedBy: {name: time} }; throws on a bad known signature or
 * when no known key signed. */
export async function openNote(note, keys) {
  if (!note.endsWith('\n')) throw new LogProblem('a note ends with a newline');
  const cut = note.lastIndexOf('\n\n');
  if (cut < 0) throw new LogProblem('a note has a blank line before its signatures');
  const text = note.slice(0, cut + 1);
  const signedBy = {};
  for (const line of note.slice(cut + 2).split('\n').slice(0, -1)) {
    const parts = line.split(' ');
    if (parts.length !== 3 || parts[0] !== DASH) throw new LogProblem('not a signature line');
    const raw = unb64(parts[2]);
    const key = keys.find((k) => k.name === parts[1] && equal(k.id, raw.slice(0, 4)));
    if (!key) continue;
    let ok; let when = 0;
    if (key.type === 4) {
      if (raw.length !== 76) throw new LogProblem('a cosignature is 4 + 8 + 64 bytes');
      when = Number(Buffer.from(raw.slice(4, 12)).readBigUInt64BE());
      ok = await ed25519Verify(key.publicKey, raw.slice(12),
        UTF8.encode(`cosignature/v1\ntime ${when}\n${text}`));
    } else {
      ok = await ed25519Verify(key.publicKey, raw.slice(4), UTF8.encode(text));
    }
    if (!ok) throw new LogProblem(`the signature by ${key.name} does not verify`);
    signedBy[key.name] = when;
  }
  if (!Object.keys(signedBy).length) throw new LogProblem('no signature by a known key');
  return { text, signedBy };
}

export function parseCheckpoint(text) {
  const lines = text.split('\n');
  if (lines.length < 4 || lines.at(-1) !== '' || lines.slice(0, -1).some((x) => !x)) {
    throw new LogProblem('a checkpoint is at least three non-empty lines');
  }
  if (!/^(0|[1-9][0-9]*)$/.test(lines[1])) throw new LogProblem('bad checkpoint size');
  const root = unb64(lines[2]);
  if (root.length !== 32) throw new LogProblem('a root is 32 bytes');
  return { origin: lines[0], size: Number(lines[1]), root };
}

const noteText = (note) => note.slice(0, note.lastIndexOf('\n\n') + 1);

/** The replica keys of a key set (cpsettle keys show) as note keys for `origin`. */
export const replicaKeys = (keySet, origin) => Promise.all((keySet.keys || []).map(
  (k) => noteKey(origin, new Uint8Array(Buffer.from(k.publicKey, 'hex')))));

/**
 * Check logs (the text of JSON-lines files) against the witness's export: problems as
 * [kind, text]. Each log's leaves in index order must be there without a gap up to and
 * including every cosigned checkpoint's own line, hash to its root; every witnessed log must be
 * there, and no other.
 */
export async function checkLogs(texts, exported, witnessKey, keySet) {
  const problems = [];
  const logs = new Map();
  for (const text of texts) {
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      let e; try { e = JSON.parse(raw); } catch { continue; }
      if (typeof e !== 'object' || e === null || typeof e.log !== 'string' ||
          !Number.isInteger(e.index)) continue;
      if (!logs.has(e.log)) logs.set(e.log, new Map());
      const byIndex = logs.get(e.log);
      const highest = Math.max(-1, ...byIndex.keys());
      if (e.index < highest && !byIndex.has(e.index)) {
        problems.push(['order', `${e.log}: index ${e.index} after index ${highest}`]);
      }
      const h = await leafHash(UTF8.encode(raw.replace(/\r$/, '')));
      if (byIndex.has(e.index)) {
        problems.push([equal(byIndex.get(e.index).h, h) ? 'duplicate' : 'fork',
          `${e.log}: index ${e.index} twice`]);
        continue;
      }
      byIndex.set(e.index, { h, e });
    }
  }
  const trees = new Map();
  for (const [origin, byIndex] of logs) {
    const hashes = [];
    while (byIndex.has(hashes.length)) hashes.push(byIndex.get(hashes.length).h);
    if (hashes.length < byIndex.size) problems.push(['gap', `${origin}: lines missing`]);
    trees.set(origin, hashes);
    const keys = keySet ? await replicaKeys(keySet, origin) : [];
    for (const [, { e }] of byIndex) {
      if (e.event !== 'audit.checkpoint' || !e.signed) continue;
      const cp = parseCheckpoint(noteText(e.checkpoint));
      if (keySet) {
        try { await openNote(e.checkpoint, keys); } catch (err) {
          problems.push(['signature', `${origin}: ${err.message}`]);
        }
      }
      if (cp.size <= hashes.length && !equal(await rootOf(hashes, 0, cp.size), cp.root)) {
        problems.push(['root', `${origin}: the lines before its checkpoint of ${cp.size}`]);
      }
    }
  }
  const seen = new Set();
  for (const w of exported.logs) {
    seen.add(w.origin);
    const trusted = [witnessKey, ...(keySet ? await replicaKeys(keySet, w.origin) : [])];
    let opened;
    try { opened = await openNote(w.checkpoint, trusted); } catch (err) {
      problems.push(['cosignature', `${w.origin}: ${err.message}`]); continue;
    }
    if (!(witnessKey.name in opened.signedBy)) {
      problems.push(['cosignature', `${w.origin}: not cosigned by the witness`]); continue;
    }
    const cp = parseCheckpoint(opened.text);
    const hashes = trees.get(w.origin);
    if (!hashes) { problems.push(['missing', `${w.origin}: registered, not in the files`]); continue; }
    if (hashes.length <= cp.size) {
      problems.push(['short', `${w.origin}: ${hashes.length} lines, cosigned ${cp.size}`]);
    } else if (!equal(await rootOf(hashes, 0, cp.size), cp.root)) {
      problems.push(['root', `${w.origin}: not the cosigned root`]);
    }
  }
  for (const origin of trees.keys()) {
    if (!seen.has(origin)) problems.push(['unwitnessed', `${origin}: no witness saw this log`]);
  }
  return problems;
}

/** Check a c2sp.org/tlog-proof: the checkpoint signed by a replica key (and cosigned by the
 * witness when its key is given), the line (extra) included at its index. The line's event. */
export async function checkProof(text, keySet, witnessKey = null) {
  const cut = text.indexOf('\n\n');
  if (cut < 0) throw new LogProblem('not a tlog-proof');
  const head = text.slice(0, cut).split('\n');
  const note = text.slice(cut + 2);
  if (head[0] !== 'c2sp.org/tlog-proof@v1' || !head[1]?.startsWith('extra ')) {
    throw new LogProblem('not a c2sp.org/tlog-proof@v1 with its line');
  }
  const line = unb64(head[1].slice(6));
  const m = /^index (0|[1-9][0-9]*)$/.exec(head[2] || '');
  if (!m) throw new LogProblem('no index line');
  const index = Number(m[1]);
  const proof = head.slice(3).map(unb64);
  const cp = parseCheckpoint(noteText(note));
  const keys = [...await replicaKeys(keySet, cp.origin), ...(witnessKey ? [witnessKey] : [])];
  const opened = await openNote(note, keys);
  if (!(cp.origin in opened.signedBy)) throw new LogProblem('not signed by a replica key');
  if (witnessKey && !(witnessKey.name in opened.signedBy)) {
    throw new LogProblem('not cosigned by the witness');
  }
  await verifyInclusion(await leafHash(line), index, cp.size, proof, cp.root);
  const event = JSON.parse(Buffer.from(line).toString('utf8'));
  if (event.log !== cp.origin || event.index !== index) {
    throw new LogProblem("the line's log fields are not the proof's");
  }
  return { event, checkpoint: cp, cosigned: Boolean(witnessKey) };
}

export { b64, unb64 };
