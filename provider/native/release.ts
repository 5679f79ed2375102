/**
 * What a release build bakes into the self-contained plugin (tools/release/bundle.mjs defines
 * `PULUMI_PROXY_RELEASE` when it bundles): the version, since the bundle has no package.json beside
 * it, and where the engine downloads the plugin from, which the schema hands to every generated SDK.
 * Run from the package (dist/), there is none: the version is the manifest's and the schema names no
 * download URL, so the committed SDKs stay the same whatever a release was built with.
 */
declare const PULUMI_PROXY_RELEASE: ReleaseInfo | undefined;

export interface ReleaseInfo {
  version: string;
  pluginDownloadURL?: string;
}

export const release: ReleaseInfo | undefined =
  typeof PULUMI_PROXY_RELEASE === "undefined" ? undefined : PULUMI_PROXY_RELEASE;
