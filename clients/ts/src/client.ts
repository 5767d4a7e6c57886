// A cpsettle client in TypeScript, generated from the .proto files (npm run generate) and
// called with Connect-ES: over gRPC (HTTP/2, the service's gRPC port) or over the Connect
// protocol (HTTP/1.1, JSON or binary, the service's HTTP port), with TLS, a bearer token and
// retries of UNAVAILABLE and AT_CAPACITY (README, "Rebalancing and retries").
import { readFileSync } from "node:fs";
import { createClient, Code, ConnectError, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { SettlementService } from "./gen/cpsettle/v1/settlement_pb.js";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  type BadRequest_FieldViolation,
} from "./gen/google/rpc/error_details_pb.js";

export type SettlementClient = Client<typeof SettlementService>;

/** Retries of a unary call: `attempts` in all, the first wait `initialMs`, doubling up to `maxMs`
 * (each wait randomized between half and all of it). */
export interface RetryOptions {
  attempts: number;
  initialMs: number;
  maxMs: number;
}

/** The Python client's service config, in Connect-ES terms: 4 attempts, 0.1 s doubling to 1 s. */
export const DEFAULT_RETRY: RetryOptions = { attempts: 4, initialMs: 100, maxMs: 1000 };

export interface SettlementOptions {
  /** "grpc" (default: the gRPC port, HTTP/2) or "connect" (the HTTP/JSON port, HTTP/1.1). */
  protocol?: "grpc" | "connect";
  /** Connect only: JSON bodies instead of binary ones (default binary). */
  json?: boolean;
  /** TLS: the CA certificate (PEM file) to trust; `true` for the system's roots. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string; serverName?: string } | true;
  /** Sent as `authorization: Bearer <token>` with every call (CPSETTLE_AUTH_TOKENS_FILE). */
  token?: string;
  /** Retries of UNAVAILABLE and RESOURCE_EXHAUSTED/AT_CAPACITY; `false`: none. */
  retry?: RetryOptions | false;
  /** Called before each retry (attempt is the one about to be made, from 2): for logs and tests. */
  onRetry?: (attempt: number, error: ConnectError) => void;
}

/**
 * A client of the service at `address`: "host:port", or a base URL ("https://host:port"). TLS
 * follows `options.tls` (or an https:// URL); the gRPC protocol needs HTTP/2 end to end, the
 * Connect protocol works over any HTTP/1.1 path.
 */
export function connectSettlement(address: string, options: SettlementOptions = {}): SettlementClient {
  const secure = options.tls !== undefined || address.startsWith("https://");
  const baseUrl = address.includes("://") ? address : `${secure ? "https" : "http"}://${address}`;
  const tls = options.tls === true || options.tls === undefined ? {} : options.tls;
  const nodeOptions = secure
    ? {
        ca: tls.caFile ? readFileSync(tls.caFile) : undefined,
        cert: tls.certFile ? readFileSync(tls.certFile) : undefined,
        key: tls.keyFile ? readFileSync(tls.keyFile) : undefined,
        servername: tls.serverName,
      }
    : {};
  const interceptors: Interceptor[] = [];
  if (options.retry !== false) {
    interceptors.push(retryInterceptor(options.retry ?? DEFAULT_RETRY, options.onRetry));
  }
  if (options.token) {
    const bearer = `Bearer ${options.token}`;
    interceptors.push((next) => (request) => {
      request.header.set("authorization", bearer);
      return next(request);
    });
  }
  const transport = options.protocol === "connect"
    ? createConnectTransport({
        baseUrl, httpVersion: "1.1", useBinaryFormat: !options.json, nodeOptions, interceptors,
      })
    : createGrpcTransport({ baseUrl, nodeOptions, interceptors });
  return createClient(SettlementService, transport);
}

/** Whether a failed call may be tried again: the replica is going away or busy. A request too
 * large (RESOURCE_EXHAUSTED, MESSAGE_TOO_LARGE) fails the same way every time. */
export function retryable(error: ConnectError): boolean {
  if (error.code === Code.Unavailable) return true;
  if (error.code !== Code.ResourceExhausted) return false;
  return error.findDetails(ErrorInfoSchema).some((info) => info.reason === "AT_CAPACITY");
}

/** Retries a unary call on `retryable` errors with exponential backoff (streams are not retried:
 * `cpsettle audit` reconnects a stream by itself). Settle is deterministic: a retried call answers
 * the same settlement. */
export function retryInterceptor(retry: RetryOptions,
                                 onRetry?: (attempt: number, error: ConnectError) => void): Interceptor {
  return (next) => async (request) => {
    if (request.stream) return next(request);
    let wait = retry.initialMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(request);
      } catch (caught) {
        const error = ConnectError.from(caught);
        if (attempt >= retry.attempts || !retryable(error) || request.signal.aborted) throw error;
        onRetry?.(attempt + 1, error);
        await new Promise((resolve) => setTimeout(resolve, wait * (0.5 + Math.random() / 2)));
        wait = Math.min(wait * 2, retry.maxMs);
      }
    }
  };
}

/**
 * The field violations of an INVALID_ARGUMENT error: the google.rpc.BadRequest details that the
 * server puts in the grpc-status-details-bin trailer (gRPC) or the error JSON (Connect). Empty for
 * any other error.
 */
export function fieldViolations(error: unknown): BadRequest_FieldViolation[] {
  const connectError = ConnectError.from(error);
  return connectError.findDetails(BadRequestSchema).flatMap((bad) => bad.fieldViolations);
}
