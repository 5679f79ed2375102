import * as pulumi from "@pulumi/pulumi";
import { KINDS } from "../../provider/native/kinds";

/**
 * Runs the TypeScript that `pulumi import` generated as a program. Its only TypeScript is the import
 * lines: `@pulumi/proxy` (a generated SDK comes later) is stood in for by one class per native token.
 */
export function runGenerated(program: string): void {
  const proxy = Object.fromEntries(
    KINDS.map((kind) => [
      kind.name,
      class extends pulumi.CustomResource {
        constructor(name: string, args: pulumi.Inputs, opts?: pulumi.CustomResourceOptions) {
          super(kind.token, name, args, opts);
        }
      },
    ]),
  );
  new Function("pulumi", "proxy", program.replace(/^import .*$/gm, ""))(pulumi, proxy);
}
