/**
 * What a release build bakes into the self-contained plugin (tools/release/bundle.mjs defines
 * `PULUMI_PROXY_RELEASE` when it bundles): the manifest's facts, since the bundle has no package.json
 * beside it; where the engine downloads the plugin from, which the schema hands to every generated
 * SDK; and the repository the release comes from, which the schema names as its homepage and
 * repository for the registry. Run from the package (dist/), there is none: the facts are the
 * manifest's and the schema names no download URL and no repository, so the committed SDKs stay the
 * same whatever a release was built with.
 */
declare const PULUMI_PROXY_RELEASE: ReleaseInfo | undefined;

/** The manifest's fields the schema repeats (package.json: version, license, keywords, author). */
export interface PackageFacts {
  version: string;
  license: string;
  keywords: string[];
  author: string;
}

export interface ReleaseInfo extends PackageFacts {
  pluginDownloadURL?: string;
  /** The release's source repository (`--repository`), e.g. https://github.com/<owner>/pulumi-proxy. */
  repository?: string;
}

export const release: ReleaseInfo | undefined =
  typeof PULUMI_PROXY_RELEASE === "undefined" ? undefined : PULUMI_PROXY_RELEASE;
