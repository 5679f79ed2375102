import FindMyWay from "find-my-way";
import { ENDPOINTS, type OperationId } from "../contract/endpoints";
import type { Endpoint } from "../contract/operation";
import { HANDLERS, type Handler } from "./handlers";

export interface Route {
  readonly operationId: OperationId;
  readonly endpoint: Endpoint;
  readonly handler: Handler;
  /** `GET /v1/proxy-users/{id}`: the stats key, precomputed so the hot path does not build strings. */
  readonly label: string;
  readonly readsBody: boolean;
  readonly changesState: boolean;
  /** "keys:write, or the key itself": the key named in the path may act on itself without keys:write. */
  readonly selfService: boolean;
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string | undefined>;
  searchParams: Record<string, string | string[]>;
}

const SELF_SERVICE: ReadonlySet<OperationId> = new Set<OperationId>(["getApiKey", "rotateApiKey"]);
const ROUTED_METHODS = ["GET", "POST", "PATCH", "DELETE"] as const;

/** find-my-way, compiled once from the endpoint table: the table is the only list of routes there is. */
export class Router {
  private readonly router = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false });

  constructor() {
    for (const endpoint of ENDPOINTS as readonly Endpoint[]) {
      const operationId = endpoint.operationId as OperationId;
      const route: Route = {
        operationId,
        endpoint,
        handler: HANDLERS[operationId],
        label: `${endpoint.method} ${endpoint.path}`,
        readsBody: endpoint.method === "POST" || endpoint.method === "PATCH",
        changesState: endpoint.method !== "GET",
        selfService: SELF_SERVICE.has(operationId),
      };
      this.router.on(endpoint.method, endpoint.path.replace(/\{(\w+)\}/g, ":$1"), () => undefined, route);
    }
    this.router.compile();
  }

  find(method: string, url: string): RouteMatch | null {
    const found = this.router.find(method as FindMyWay.HTTPMethod, url);
    if (!found) return null;
    return {
      route: found.store as Route,
      params: found.params,
      searchParams: found.searchParams as Record<string, string | string[]>,
    };
  }

  /** Methods that would have matched, for a 405's `allow` header; empty means the path is unknown. */
  allowedMethods(url: string): string[] {
    return ROUTED_METHODS.filter((method) => this.router.find(method, url) !== null);
  }
}
