export * from "./billing";
export * from "./common";
export * from "./endpoints";
export * from "./ips";
export * from "./keys";
export * from "./proxyUsers";
export * from "./usage";
