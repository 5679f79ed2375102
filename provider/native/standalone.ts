/**
 * `pulumi-resource-proxy` as the release ships it: the entry of the one bundled script
 * (tools/release/bundle.mjs), compiled by Bun into each platform's executable, or run by `node` from the plugin cache.
 * Nothing is deferred here: the bundle carries stand-ins for `typescript` and `@npmcli/arborist`
 * instead of the modules themselves.
 */
import { startPlugin } from "./start";

startPlugin();
