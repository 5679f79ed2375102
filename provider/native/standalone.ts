/**
 * `pulumi-resource-proxy` as the release ships it: the entry of the one bundled script
 * (tools/release/bundle.mjs), run inside a Node single executable or by `node` from the plugin cache.
 * Nothing is deferred here: the bundle carries stand-ins for `typescript` and `@npmcli/arborist`
 * instead of the modules themselves.
 */
import { startPlugin } from "./start";

startPlugin();
