import type { OperationId } from "../../contract/endpoints";
import { billingHandlers } from "./billing";
import type { Handler } from "./context";
import { ipHandlers } from "./ips";
import { keyHandlers } from "./keys";
import { proxyUserHandlers } from "./proxyUsers";
import { usageHandlers } from "./usage";

/** One handler per operation in ENDPOINTS; a missing one fails to compile. */
export const HANDLERS: { readonly [K in OperationId]: Handler } = {
  ...proxyUserHandlers,
  ...ipHandlers,
  ...keyHandlers,
  ...usageHandlers,
  ...billingHandlers,
};

export type { Handler, HandlerContext } from "./context";
