/**
 * The import rules `npm test` checks (dependency-cruiser): no import circles anywhere, and the rooms
 * stay layered: the contract imports no other room; the SDK only the contract; the provider never the
 * server, the CLI or the tools; the server never the SDK, the provider or the CLI; no room of the
 * product ever the tools (the build's room), the harness (what tests, bench and demo run on) or the
 * docs' generators (docs/generate/, which read the product to write its generated pages).
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle makes load order matter and hides which room depends on which.",
      from: {},
      to: { circular: true },
    },
    {
      name: "contract-stands-alone",
      severity: "error",
      comment: "contract/ is the service's description: every other room reads it, it reads none of them.",
      from: { path: "^contract/" },
      to: { path: "^(sdk|provider|server|cli|tools|harness|demo|bench|docs)/" },
    },
    {
      name: "sdk-over-contract-only",
      severity: "error",
      from: { path: "^sdk/" },
      to: { path: "^(provider|server|cli|tools|harness|demo|bench|docs)/" },
    },
    {
      name: "provider-below-front-ends",
      severity: "error",
      comment: "No HTTP or server code in the provider: it talks to the API through the SDK only.",
      from: { path: "^provider/" },
      to: { path: "^(server|cli|policy|tools|harness|demo|bench)/" },
    },
    {
      name: "tools-build-only",
      severity: "error",
      comment:
        "tools/ builds and provisions; what the package runs at run time lives in a room of the product (the process helpers in provider/process/).",
      from: { path: "^(contract|sdk|provider|policy|server|cli)/" },
      to: { path: "^tools/" },
    },
    {
      name: "harness-for-tests-bench-demo",
      severity: "error",
      comment:
        "harness/ runs stacks, browsers and crashes for the tests, the bench and the demo; nothing the package ships or builds with may need it.",
      from: { path: "^(contract|sdk|provider|policy|server|cli|tools)/" },
      to: { path: "^harness/" },
    },
    {
      name: "docs-generators-read-the-product",
      severity: "error",
      comment:
        "The docs' generators (docs/generate/) read the product to write its generated pages; nothing the package ships or builds with needs them.",
      from: { path: "^(contract|sdk|provider|policy|server|cli|tools|harness)/" },
      to: { path: "^docs/" },
    },
    {
      name: "harness-below-its-users",
      severity: "error",
      comment:
        "The harness serves the tests, the bench and the demo; it imports none of them (test-only helpers stay in test/support/).",
      from: { path: "^harness/" },
      to: { path: "^(test|bench|demo|tools)/" },
    },
    {
      name: "server-is-not-a-client",
      severity: "error",
      from: { path: "^server/" },
      to: { path: "^(sdk|provider|cli|harness|demo|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["require", "default", "types"] },
  },
};
