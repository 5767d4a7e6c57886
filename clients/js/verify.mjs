#!/usr/bin/env node
// An independent checker of cpsettle settlements, written from docs/AUDIT.md ("Verifying a
// settlement", "The canonical content bytes" and the appendix), not from the service's code.
// Node's standard library only: proof.mjs does the checks with WebCrypto (SHA-256, Ed25519),
// the same code the HTML views run in a browser.
//
//   node verify.mjs SETTLEMENT.json [--keys KEYS.json]
//
// Prints a JSON report; exit 0 valid, 1 invalid, 2 bad arguments, 4 digests consistent but the
// signature not checked (no --keys) — the same codes as `cpsettle verify`.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { keyGivenTwice, readKeys, verifySettlement } from './proof.mjs';

export { encode, ENUMS, NotASettlement, readKeys, SCHEMA, verifySettlement } from './proof.mjs';

async function main(argv) {
  const args = [...argv];
  let keysPath = null;
  const i = args.indexOf('--keys');
  if (i >= 0) {
    keysPath = args[i + 1];
    args.splice(i, 2);
  }
  if (args.length !== 1 || (i >= 0 && !keysPath)) {
    process.stderr.write('usage: node verify.mjs SETTLEMENT.json [--keys KEYS.json]\n');
    return 2;
  }
  let keys = null;
  try {
    if (keysPath) keys = readKeys(JSON.parse(readFileSync(keysPath, 'utf8')));
  } catch (e) {
    process.stderr.write(`cannot use the key set ${keysPath}: ${e.message}\n`);
    return 2;
  }
  let stored;
  try {
    const text = readFileSync(args[0], 'utf8');
    stored = JSON.parse(text);
    const twice = keyGivenTwice(text);
    if (twice) throw new Error(`the field ${twice} is given twice`);
  } catch (e) {
    process.stdout.write(JSON.stringify({ verdict: 'invalid', failures: ['file'],
      reason: e.message }) + '\n');
    return 1;
  }
  const report = await verifySettlement(stored, keys);
  const { contentHex, ...shown } = report;
  if (!keys && report.verdict !== 'invalid') {
    shown.note = 'digests only: the signature was NOT checked (no --keys)';
  }
  process.stdout.write(JSON.stringify(shown, null, 1) + '\n');
  if (report.verdict === 'invalid') return 1;
  return keys ? 0 : 4;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
