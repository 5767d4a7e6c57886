#!/usr/bin/env node
// The independent checker of the audit log's checkpoints and inclusion proofs (log.mjs):
//
//   node audit-log.mjs verify LOG... --witness EXPORT.json --witness-key VKEY [--keys KEYS.json]
//   node audit-log.mjs check-proof PROOF --keys KEYS.json [--witness-key VKEY] [--settlement S]
//
// verify: exit 0 intact, 1 problems (printed as JSON); check-proof: 0 valid and cosigned, 1
// invalid, 4 valid but the witness's cosignature not checked (no --witness-key); 2 bad usage.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { checkLogs, checkProof, fromVkey } from './log.mjs';

function option(args, name) {
  const i = args.indexOf(name);
  if (i < 0) return null;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
}

const readVkey = (v) => fromVkey((v.includes('+') ? v : readFileSync(v, 'utf8')).trim());

async function main(argv) {
  const args = [...argv];
  const command = args.shift();
  const keysPath = option(args, '--keys');
  const keySet = keysPath ? JSON.parse(readFileSync(keysPath, 'utf8')) : null;
  const vkey = option(args, '--witness-key');
  if (command === 'verify') {
    const exportPath = option(args, '--witness');
    if (!exportPath || !vkey || !args.length) {
      process.stderr.write('usage: audit-log.mjs verify LOG... --witness EXPORT.json ' +
        '--witness-key VKEY [--keys KEYS.json]\n');
      return 2;
    }
    const problems = await checkLogs(args.map((p) => readFileSync(p, 'utf8')),
      JSON.parse(readFileSync(exportPath, 'utf8')), await readVkey(vkey), keySet);
    process.stdout.write(JSON.stringify({ verdict: problems.length ? 'problems' : 'intact',
      problems }, null, 1) + '\n');
    return problems.length ? 1 : 0;
  }
  if (command === 'check-proof') {
    const settlementPath = option(args, '--settlement');
    if (args.length !== 1 || !keySet) {
      process.stderr.write('usage: audit-log.mjs check-proof PROOF --keys KEYS.json ' +
        '[--witness-key VKEY] [--settlement SETTLEMENT.json]\n');
      return 2;
    }
    try {
      const { event, checkpoint } = await checkProof(readFileSync(args[0], 'utf8'), keySet,
        vkey ? await readVkey(vkey) : null);
      if (settlementPath) {
        const stored = JSON.parse(readFileSync(settlementPath, 'utf8'));
        const s = stored.settlement || stored;
        if (event.event !== 'settlement.issued' || event.settlement_id !== s.settlementId) {
          throw new Error("the line is not this settlement's settlement.issued");
        }
      }
      process.stdout.write(JSON.stringify({ verdict: 'valid', origin: checkpoint.origin,
        size: checkpoint.size, cosignatureChecked: Boolean(vkey) }) + '\n');
      return vkey ? 0 : 4;
    } catch (e) {
      process.stdout.write(JSON.stringify({ verdict: 'invalid', reason: e.message }) + '\n');
      return 1;
    }
  }
  process.stderr.write('usage: audit-log.mjs verify|check-proof ...\n');
  return 2;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
