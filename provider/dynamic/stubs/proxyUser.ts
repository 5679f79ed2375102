import { stubsFor } from "../serializedStub";

// The module that the provider text in state requires (stubs.ts, serializedStub): keep its path.
export = stubsFor("proxyUser");
