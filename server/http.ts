import type { IncomingMessage, ServerResponse } from "node:http";

export const BODY_LIMIT_BYTES = 64 * 1024;
/** Past the limit the body is still read and thrown away, so the client sees the 413 instead of a broken pipe; up to this much. */
const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;

export type BodyRead = { kind: "ok"; bytes: Buffer } | { kind: "too_large"; drained: boolean } | { kind: "aborted" };

export function readBody(req: IncomingMessage): Promise<BodyRead> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > DRAIN_LIMIT_BYTES) return Promise.resolve({ kind: "too_large", drained: false });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (result: BodyRead): void => {
      req.removeAllListeners("data");
      resolve(result);
    };
    req.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (received <= BODY_LIMIT_BYTES) chunks.push(chunk);
      else if (received > DRAIN_LIMIT_BYTES) finish({ kind: "too_large", drained: false });
    });
    req.on("end", () => {
      finish(
        received > BODY_LIMIT_BYTES
          ? { kind: "too_large", drained: true }
          : { kind: "ok", bytes: Buffer.concat(chunks) },
      );
    });
    req.on("error", () => finish({ kind: "aborted" }));
    req.on("aborted", () => finish({ kind: "aborted" }));
  });
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && JSON_MEDIA_TYPE.test(contentType);
}

export interface Reply {
  status: number;
  body: string | undefined;
  headers: Record<string, string>;
  /** The request was not read to the end, so the connection cannot carry another one. */
  closeConnection?: boolean;
}

export function sendReply(res: ServerResponse, requestId: string, reply: Reply): void {
  const headers: Record<string, string | number> = { ...reply.headers, "x-request-id": requestId };
  if (reply.body !== undefined) {
    headers["content-type"] = "application/json; charset=utf-8";
    headers["content-length"] = Buffer.byteLength(reply.body);
  }
  if (reply.closeConnection) headers.connection = "close";
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
