// A cpsettle client in TypeScript, generated from the .proto files (npm run generate) and
// called with Connect-ES over the gRPC protocol: what a table-software team writes on day one.
import { createClient, ConnectError, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SettlementService } from "./gen/cpsettle/v1/settlement_pb.js";
import { BadRequestSchema, type BadRequest_FieldViolation } from "./gen/google/rpc/error_details_pb.js";

export type SettlementClient = Client<typeof SettlementService>;

/** A client of the service at `address` ("host:port"), plaintext HTTP/2 (TLS: an https:// baseUrl). */
export function connectSettlement(address: string): SettlementClient {
  const transport = createGrpcTransport({ baseUrl: `http://${address}` });
  return createClient(SettlementService, transport);
}

/**
 * The field violations of an INVALID_ARGUMENT error: the google.rpc.BadRequest details that the
 * server puts in the grpc-status-details-bin trailer. Empty for any other error.
 */
export function fieldViolations(error: unknown): BadRequest_FieldViolation[] {
  const connectError = ConnectError.from(error);
  return connectError.findDetails(BadRequestSchema).flatMap((bad) => bad.fieldViolations);
}
