// The proof test vectors (tests/vectors): every verdict, digest, id and content byte as expected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { readKeys, verifySettlement } from '../verify.mjs';

const folder = process.env.CPSETTLE_VECTORS ??
  join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'tests', 'vectors');
const keys = readKeys(JSON.parse(readFileSync(join(folder, 'keys.json'), 'utf8')));
const names = readdirSync(folder).filter((n) => n.endsWith('.json') && n !== 'keys.json').sort();

test('there are valid and tampered vectors', () => {
  assert.ok(names.filter((n) => n.startsWith('valid-')).length >= 10);
  assert.ok(names.filter((n) => !n.startsWith('valid-')).length >= 10);
});

for (const name of names) {
  test(name, async () => {
    const v = JSON.parse(readFileSync(join(folder, name), 'utf8'));
    const got = await verifySettlement(v.settlement, keys);
    assert.deepEqual([...got.failures].sort(), [...v.expected.failures].sort());
    assert.equal(got.verdict, v.expected.verdict);
    if (v.expected.contentHex !== undefined) {
      assert.equal(got.contentHex, v.expected.contentHex);
      assert.equal(got.settlementDigest, v.expected.settlementDigest);
      assert.equal(got.settlementId, v.expected.settlementId);
    }
  });
}

test('without keys only the digests are checked, and it says so', async () => {
  const v = JSON.parse(readFileSync(join(folder, 'valid-one-six.json'), 'utf8'));
  const got = await verifySettlement(v.settlement, null);
  assert.equal(got.verdict, 'digests-only');
  assert.equal(got.signatureChecked, false);
  assert.deepEqual(got.failures, []);
});
