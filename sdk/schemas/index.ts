export * from "./common";
export * from "./proxyUsers";
export * from "./ips";
export * from "./keys";
export * from "./usage";
export * from "./billing";
export * from "./endpoints";
