import { stubsFor } from "../serializedStub";

// The module that the provider text in state requires (../serializedStub.ts): keep its path.
export = stubsFor("apiKey");
