// RFC 6962 proofs (log.mjs) against transparency-dev/merkle's vectors in tests/vectors/merkle,
// and the signed-note known answer of golang.org/x/mod/sumdb/note.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { fromVkey, openNote, unb64, verifyConsistency, verifyInclusion } from '../log.mjs';

const VECTORS = fileURLToPath(new URL('../../../tests/vectors/merkle/', import.meta.url));
const walk = (dir) => readdirSync(dir).flatMap((n) => {
  const p = join(dir, n);
  return statSync(p).isDirectory() ? walk(p) : p.endsWith('.json') ? [p] : [];
});
const b = (t) => { try { return unb64(t); } catch { return new Uint8Array(Buffer.from(t, 'base64')); } };

test('inclusion vectors', async () => {
  const files = walk(join(VECTORS, 'inclusion'));
  assert.ok(files.length > 80);
  for (const f of files) {
    const v = JSON.parse(readFileSync(f, 'utf8'));
    const run = verifyInclusion(b(v.leafHash), v.leafIdx, v.treeSize, (v.proof || []).map(b),
      b(v.root));
    if (v.wantErr) await assert.rejects(run, undefined, f); else await run;
  }
});

test('consistency vectors', async () => {
  const files = walk(join(VECTORS, 'consistency'));
  assert.ok(files.length > 90);
  for (const f of files) {
    const v = JSON.parse(readFileSync(f, 'utf8'));
    const run = verifyConsistency(v.size1, v.size2, (v.proof || []).map(b), b(v.root1),
      b(v.root2));
    if (v.wantErr) await assert.rejects(run, undefined, f); else await run;
  }
});

test('the Go signed-note vector', async () => {
  const key = await fromVkey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
  const text = "If you think cryptography is the answer to your problem,\n" +
    "then you don't know what your problem is.\n";
  const sig = '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
  assert.deepEqual((await openNote(`${text}\n${sig}`, [key])).signedBy, { PeterNeumann: 0 });
  await assert.rejects(openNote(`${text.replace('answer', 'ANSWER')}\n${sig}`, [key]));
});
