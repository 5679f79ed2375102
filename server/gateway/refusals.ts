import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { GATEWAY_ERRORS, type GatewayErrorCode } from "../../contract/errors";
import { errorBody } from "../errors";

/**
 * A refusal: status from the table, `x-proxy-error`, the contract's error body, and for a 407 the
 * challenge. The message is the gateway's own sentence; nothing the client sent is echoed, so a
 * password can never come back in it.
 */
export class Refusal {
  readonly status: number;
  constructor(
    readonly code: GatewayErrorCode,
    readonly message: string,
    readonly retryAfterSeconds?: number,
  ) {
    this.status = GATEWAY_ERRORS[code].status;
  }

  headers(requestId: string, body: string): Record<string, string> {
    const headers: Record<string, string> = {
      "x-proxy-error": this.code,
      "x-request-id": requestId,
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(body)),
    };
    if (this.status === 407) headers["proxy-authenticate"] = 'Basic realm="proxy"';
    if (this.retryAfterSeconds !== undefined) headers["retry-after"] = String(this.retryAfterSeconds);
    return headers;
  }

  body(requestId: string): string {
    return errorBody(this.code, this.message, requestId);
  }

  /** On an HTTP exchange, then the connection closes: what the client pipelined behind a refused request is not served. */
  send(res: ServerResponse, requestId: string): void {
    const body = this.body(requestId);
    const headers = { ...this.headers(requestId, body), connection: "close" };
    res.writeHead(this.status, headers);
    res.end(body);
  }

  /** On a CONNECT socket, which Node has already taken away from the HTTP server: raw bytes, then `sent` once they are handed on. */
  sendRaw(socket: Duplex, requestId: string, sent?: () => void): void {
    const body = this.body(requestId);
    const headers = { ...this.headers(requestId, body), connection: "close" };
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    socket.end(`HTTP/1.1 ${this.status} ${REASON_PHRASES[this.status] ?? "Error"}\r\n${head}\r\n${body}`, sent);
  }
}

const REASON_PHRASES: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  407: "Proxy Authentication Required",
  429: "Too Many Requests",
  502: "Bad Gateway",
};
