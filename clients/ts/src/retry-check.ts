// The TypeScript client's retries against a server that refuses the first attempts
// (tests/contract/test_typescript_client.py): settles REQUEST.json once and prints the settlement
// id and the retries the client made, or the error's code and reason when it gave up.
//
// Usage: node dist/retry-check.js [--protocol grpc|connect] [--no-retry] ADDRESS REQUEST.json
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConnectError } from "@connectrpc/connect";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { SettleRequestSchema } from "./gen/cpsettle/v1/settlement_pb.js";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { connectSettlement } from "./client.js";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    protocol: { type: "string", default: "grpc" },
    "no-retry": { type: "boolean", default: false },
  },
});
const [address, requestPath] = positionals;
const retries: { attempt: number; code: string; reason: string }[] = [];
const reason = (error: ConnectError) =>
  error.findDetails(ErrorInfoSchema).map((info) => info.reason).join(",");
const client = connectSettlement(address, {
  protocol: flags.protocol as "grpc" | "connect",
  retry: flags["no-retry"] ? false : undefined,
  onRetry: (attempt, error) => retries.push({ attempt, code: error.code.toString(), reason: reason(error) }),
});
const request = fromJson(SettleRequestSchema, JSON.parse(readFileSync(requestPath, "utf8")) as JsonValue);
try {
  const { settlement } = await client.settle(request, { timeoutMs: 10_000 });
  console.log(JSON.stringify({ settlementId: settlement?.settlementId, retries }));
} catch (caught) {
  const error = ConnectError.from(caught);
  console.log(JSON.stringify({ code: error.code, reason: reason(error), retries }));
}
