// The contract test's caller (tests/contract/test_typescript_client.py runs it against a real
// server): Settle, ValidatePayouts and EvaluateArrangement through the generated client, and the
// BadRequest of an invalid request. It asserts what must hold whatever the table, then prints what
// it saw as JSON so that the test can compare it with the Python client's answers.
//
// Usage: node dist/contract-check.js [--protocol grpc|connect] [--json] [--ca-file CA.pem]
//                                    [--token TOKEN] ADDRESS REQUEST.json
// ADDRESS: HOST:PORT of the gRPC port, or of the HTTP port with --protocol connect.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Code, ConnectError } from "@connectrpc/connect";
import { clone, create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  EvaluateArrangementRequestSchema,
  ProposedPayoutSchema,
  SettleRequestSchema,
  ValidatePayoutsRequestSchema,
} from "./gen/cpsettle/v1/settlement_pb.js";
import { connectSettlement, fieldViolations } from "./client.js";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    protocol: { type: "string", default: "grpc" },
    json: { type: "boolean", default: false },
    "ca-file": { type: "string" },
    token: { type: "string" },
  },
});
const [address, requestPath] = positionals;
if (!address || !requestPath || !["grpc", "connect"].includes(flags.protocol!)) {
  console.error("usage: contract-check [--protocol grpc|connect] [--json] [--ca-file CA.pem] "
                + "[--token TOKEN] HOST:PORT REQUEST.json");
  process.exit(2);
}
const client = connectSettlement(address, {
  protocol: flags.protocol as "grpc" | "connect",
  json: flags.json,
  tls: flags["ca-file"] ? { caFile: flags["ca-file"] } : undefined,
  token: flags.token,
});
const json = JSON.parse(readFileSync(requestPath, "utf8")) as JsonValue;
const request = fromJson(SettleRequestSchema, json);
const sum = (values: bigint[]): bigint => values.reduce((a, b) => a + b, 0n);

// Settle: the hand id is echoed, units and money sum to zero (money after rake: to minus the rake).
const { settlement } = await client.settle(request);
assert.ok(settlement, "Settle answered without a settlement");
assert.equal(settlement.context?.handId, request.handId);
assert.equal(settlement.players.length, request.players.length);
assert.equal(sum(settlement.players.map((p) => p.netUnits)), 0n);
assert.equal(sum(settlement.players.map((p) => p.moneyBeforeRake)), 0n);
assert.equal(sum(settlement.players.map((p) => p.netMoney + p.rake)), 0n);
assert.match(settlement.settlementId, /^[0-9a-f]{64}$/);
// The time of issue is a google.protobuf.Timestamp in whole milliseconds; its fixed-width text
// (docs/AUDIT.md) is what Date's toISOString writes.
const issuedAt = settlement.issuedAt;
assert.ok(issuedAt, "a settlement carries its time of issue");
assert.equal(issuedAt.nanos % 1_000_000, 0);
const issued = timestampDate(issuedAt).toISOString();
// The currency: the request's, else the profile's, else XXX ("no currency involved").
assert.match(settlement.currency, /^[A-Z]{3}$/);
const inCurrency = (currency: string) => {
  const copy = clone(SettleRequestSchema, request);
  copy.currency = currency;
  return copy;
};
const inEuros = await client.settle(inCurrency("EUR"));
assert.equal(inEuros.settlement?.currency, "EUR");
let currencyViolations: string[] = [];
try {
  await client.settle(inCurrency("EURO"));
  assert.fail("a request in currency EURO was settled");
} catch (error) {
  assert.equal(ConnectError.from(error).code, Code.InvalidArgument);
  currencyViolations = fieldViolations(error).map(({ field }) => field);
}
assert.deepEqual(currencyViolations, ["currency"]);
const nets = Object.fromEntries(settlement.players.map((p) => [p.playerId, p.netMoney.toString()]));

// ValidatePayouts: the settlement's own nets match; one unit of money moved from the second
// player to the first is a difference of +1 and -1.
const proposed = settlement.players.map((p) =>
  create(ProposedPayoutSchema, { playerId: p.playerId, netMoney: p.netMoney }));
const matching = await client.validatePayouts(
  create(ValidatePayoutsRequestSchema, { request, proposed }));
assert.equal(matching.allMatch, true);
assert.ok(matching.players.every((check) => check.matches && check.difference === 0n));
const [first, second] = settlement.players;
const shifted = proposed.map((p) => clone(ProposedPayoutSchema, p));
shifted[0].netMoney += 1n;
shifted[1].netMoney -= 1n;
const mismatch = await client.validatePayouts(
  create(ValidatePayoutsRequestSchema, { request, proposed: shifted }));
assert.equal(mismatch.allMatch, false);
const differences = Object.fromEntries(
  mismatch.players.map((check) => [check.playerId, check.difference]));
assert.equal(differences[first.playerId], 1n);
assert.equal(differences[second.playerId], -1n);

// EvaluateArrangement under the request's rules: the first player's arrangement as dealt, then a
// fouled one (trips in front over a five-high middle).
const rules = { preset: request.preset, profile: request.profile, profileOverrides: request.profileOverrides };
const dealt = request.players[0].arrangement;
assert.ok(dealt, "the first player of REQUEST.json must hold an arrangement");
const asDealt = await client.evaluateArrangement(
  create(EvaluateArrangementRequestSchema, { ...rules, arrangement: dealt }));
assert.deepEqual(asDealt.rows.map((row) => row.cards), [dealt.front, dealt.middle, dealt.back]);
const fouled = await client.evaluateArrangement(create(EvaluateArrangementRequestSchema, {
  ...rules,
  arrangement: {
    front: ["As", "Ad", "Ac"],
    middle: ["2c", "3d", "4h", "5s", "7c"],
    back: ["Ks", "Kh", "Kd", "Qs", "Qh"],
  },
}));
assert.equal(fouled.fouled, true);
assert.equal(fouled.rows.length, 3);

// An invalid request: a short front row and a card dealt twice. Nothing is settled; the
// error is INVALID_ARGUMENT with a BadRequest naming both fields.
const invalid = clone(SettleRequestSchema, request);
const a = invalid.players[0].arrangement!;
const b = invalid.players[1].arrangement;
assert.ok(b, "the second player of REQUEST.json must hold an arrangement");
a.front = a.front.slice(0, 2);
b.back[0] = a.back[0];
let violations: { field: string; description: string }[] = [];
try {
  await client.settle(invalid);
  assert.fail("an invalid request was settled");
} catch (error) {
  assert.equal(ConnectError.from(error).code, Code.InvalidArgument);
  violations = fieldViolations(error).map(({ field, description }) => ({ field, description }));
}
const fields = violations.map((v) => v.field);
assert.ok(fields.includes("players[0].arrangement.front"), `violations: ${fields}`);
assert.ok(fields.includes("players[1].arrangement.back[0]"), `violations: ${fields}`);

console.log(JSON.stringify({
  handId: settlement.context?.handId,
  settlementId: settlement.settlementId,
  issuedAt: { seconds: issuedAt.seconds.toString(), nanos: issuedAt.nanos, text: issued },
  currency: settlement.currency,
  nets,
  allMatch: [matching.allMatch, mismatch.allMatch],
  evaluated: {
    asDealt: { fouled: asDealt.fouled, royaltyTotal: asDealt.royaltyTotal, names: asDealt.rows.map((r) => r.name) },
    fouled: { fouled: fouled.fouled, names: fouled.rows.map((r) => r.name) },
  },
  violations,
}));
