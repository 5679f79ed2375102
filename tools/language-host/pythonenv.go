package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	pycodegen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// Where this host departs from upstream's: upstream's pip toolchain, given no `virtualenv`, installs
// a program's requirements (and upgrades pip, setuptools and wheel) into whatever python3 is first on
// PATH, the user's own interpreter. This host installs only into an environment Pulumi creates.

// defaultVirtualenv is what upstream's `pulumi new` templates name, and what upstream's host assumes
// for a plugin that names none.
const defaultVirtualenv = "venv"

// refuseAmbientInstall stops an install that would land in an interpreter Pulumi did not create: pip
// with no `virtualenv` in Pulumi.yaml. uv and poetry always install into an environment of their own.
func refuseAmbientInstall(ctx context.Context, tc toolchain.Toolchain) error {
	if venv, err := tc.VirtualEnvPath(ctx); err != nil || venv != "" {
		return nil
	}
	python := "the python3 on PATH"
	if path, _, err := toolchain.CommandPath(); err == nil {
		python = path
	}
	return fmt.Errorf("Pulumi.yaml names no virtual environment for this Python program, so installing its "+
		"requirements would change %s, an interpreter Pulumi did not create. Name one in Pulumi.yaml, and "+
		"`pulumi install` creates it:\n\nruntime:\n  name: python\n  options:\n    virtualenv: %s",
		python, defaultVirtualenv)
}

// nameVirtualenv gives the Pulumi.yaml that `pulumi convert` wrote a virtual environment when it uses
// pip and names none (upstream's generator names one only for a local pulumi SDK), so that the install
// convert runs next creates it instead of refusing.
func nameVirtualenv(projectDir string) error {
	file := filepath.Join(projectDir, "Pulumi.yaml")
	project, err := workspace.LoadProject(file)
	if err != nil {
		return fmt.Errorf("could not read the generated %s: %w", file, err)
	}
	options := project.Runtime.Options()
	if name, _ := options["toolchain"].(string); name != "" && name != "pip" {
		return nil
	}
	if venv, _ := options["virtualenv"].(string); venv != "" {
		return nil
	}
	project.Runtime.SetOption("virtualenv", defaultVirtualenv)
	return project.Save(file)
}

// unpublishedSDKs are the Python packages whose names nobody has published on PyPI for them: a bare
// `pulumi_proxy==0.1.0` in requirements.txt would install whatever someone else published there.
var unpublishedSDKs = map[string]bool{"pulumi_proxy": true}

// sdkRequirements adds, for each unpublished SDK the program uses, the requirements.txt line that
// names where it comes from (the generator writes a package's entry of localDependencies as its
// line): a release's wheel, which lies beside the plugin at the schema's download URL, as the
// README's Python install names it; with no URL (an SDK not from a release), a comment saying so.
func sdkRequirements(program *pcl.Program, given map[string]string) (map[string]string, error) {
	packages, err := program.CollectNestedPackageSnapshots()
	if err != nil {
		return nil, err
	}
	lines := map[string]string{}
	for name, line := range given {
		lines[name] = line
	}
	for name, pkg := range packages {
		if _, ok := lines[name]; ok {
			continue
		}
		python, err := pythonPackageName(pkg)
		if err != nil {
			return nil, err
		}
		if !unpublishedSDKs[python] {
			continue
		}
		lines[name] = unpublishedRequirement(python, pkg)
	}
	return lines, nil
}

func pythonPackageName(pkg *schema.Package) (string, error) {
	if err := pkg.ImportLanguages(map[string]schema.Language{"python": pycodegen.Importer}); err != nil {
		return "", err
	}
	if info, ok := pkg.Language["python"].(pycodegen.PackageInfo); ok && info.PackageName != "" {
		return info.PackageName, nil
	}
	return "pulumi_" + pkg.Name, nil
}

func unpublishedRequirement(python string, pkg *schema.Package) string {
	url := pkg.PluginDownloadURL
	if pkg.Version == nil || !(strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://")) {
		return fmt.Sprintf("# %s is not on PyPI: install its release's wheel (README, Install) into the virtual "+
			"environment, e.g. venv/bin/pip install <release URL>/%s-<version>-py3-none-any.whl", python, python)
	}
	wheel := fmt.Sprintf("%s-%s-py3-none-any.whl", python, pkg.Version.String())
	return fmt.Sprintf("%s @ %s/%s", python, strings.TrimSuffix(url, "/"), wheel)
}
