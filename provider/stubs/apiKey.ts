import { stubsFor } from "../stubs";

// Being a module's whole exports lets the serializer store this as one require() line in state.
export = stubsFor("apiKey");
