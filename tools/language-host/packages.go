package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// GetRequiredPlugins is the older form of GetRequiredPackages, which the engine asks first; every
// language answers with its packages instead.
func (h *languageHost) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

// GetRequiredPackages names the provider plugins the program's Node packages declare, the way
// upstream does: a package.json with `"pulumi": {"resource": true}` (a generated SDK writes one).
// Only the program's node_modules is searched, not the rest of its folder. The dynamic provider
// ships with the CLI and is never listed.
func (h *host) GetRequiredPackages(_ context.Context, req *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	found := map[string]*pulumirpc.PackageDependency{}
	visited := map[string]bool{}
	walkNodeModules(filepath.Join(req.GetInfo().GetProgramDirectory(), "node_modules"), visited, found)
	packages := make([]*pulumirpc.PackageDependency, 0, len(found))
	for _, dependency := range found {
		packages = append(packages, dependency)
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

// walkNodeModules visits each package in a node_modules folder (scoped ones too) and the
// node_modules nested in them. Folders reached twice through links are read once.
func walkNodeModules(dir string, visited map[string]bool, found map[string]*pulumirpc.PackageDependency) {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil || visited[resolved] {
		return
	}
	visited[resolved] = true
	entries, err := os.ReadDir(resolved)
	if err != nil {
		return
	}
	for _, entry := range entries {
		packageDir := filepath.Join(resolved, entry.Name())
		if strings.HasPrefix(entry.Name(), "@") {
			walkNodeModules(packageDir, visited, found)
			continue
		}
		if dependency := pluginOfPackage(packageDir); dependency != nil {
			found[dependency.GetName()+"@"+dependency.GetVersion()] = dependency
		}
		walkNodeModules(filepath.Join(packageDir, "node_modules"), visited, found)
	}
}

// pluginOfPackage reads the provider plugin a package declares, or nil when it declares none.
func pluginOfPackage(packageDir string) *pulumirpc.PackageDependency {
	raw, err := os.ReadFile(filepath.Join(packageDir, "package.json"))
	if err != nil {
		return nil
	}
	var manifest struct {
		Name    string                  `json:"name"`
		Version string                  `json:"version"`
		Pulumi  plugin.PulumiPluginJSON `json:"pulumi"`
	}
	if json.Unmarshal(raw, &manifest) != nil || !manifest.Pulumi.Resource {
		return nil
	}
	name := manifest.Pulumi.Name
	if name == "" && strings.HasPrefix(manifest.Name, "@pulumi/") {
		name = strings.TrimPrefix(manifest.Name, "@pulumi/")
	}
	version := manifest.Pulumi.Version
	if version == "" {
		version = manifest.Version
	}
	if name == "" || version == "" {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: %s declares a Pulumi plugin without a name or version in its "+
			"\"pulumi\" section; add pulumi.name and pulumi.version to its package.json\n", packageDir)
		return nil
	}
	dependency := &pulumirpc.PackageDependency{
		Name: name, Kind: "resource", Version: "v" + strings.TrimPrefix(version, "v"), Server: manifest.Pulumi.Server,
	}
	if p := manifest.Pulumi.Parameterization; p != nil {
		dependency.Parameterization = &pulumirpc.PackageParameterization{Name: p.Name, Version: p.Version, Value: p.Value}
	}
	return dependency
}

// InstallDependencies runs the project's package manager (npm unless a lock file or the
// PULUMI_PREFER_YARN/pnpm settings say otherwise) in the program or plugin folder, for `pulumi
// install`, `pulumi convert` and policy packs installed by the CLI.
func (h *host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	dir := req.GetInfo().GetProgramDirectory()
	if root, err := npm.FindWorkspaceRoot(dir); err == nil {
		dir = root
	}
	return installDependencies(req, server, dir, func(stdout, stderr io.Writer) error {
		_, err := npm.Install(server.Context(), npm.AutoPackageManager, dir, false, stdout, stderr)
		return err
	})
}

// installDependencies streams `install`'s output to the engine, framed as upstream's hosts frame it.
func installDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
	dir string, install func(stdout, stderr io.Writer) error,
) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	fmt.Fprintf(stdout, "Installing dependencies in %s...\n\n", dir)
	if err := install(stdout, stderr); err != nil {
		return fmt.Errorf("installing the dependencies in %s failed: %w", dir, err)
	}
	fmt.Fprint(stdout, "Finished installing dependencies\n\n")
	return closer.Close()
}
