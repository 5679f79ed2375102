import * as pulumi from "@pulumi/pulumi";
import * as proxy from "pulumi-proxy/native";

/**
 * Runs the TypeScript that `pulumi import` generated as a program, over the SDK the package ships
 * (`pulumi-proxy/native`, which the code imports). Its only TypeScript is the import lines.
 */
export function runGenerated(program: string): void {
  new Function("pulumi", "proxy", program.replace(/^import .*$/gm, ""))(pulumi, proxy);
}
