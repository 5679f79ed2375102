package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	pycodegen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// The Python language host: this binary started as pulumi-language-python. Like upstream's, it runs
// a program with the Python of the virtual environment that Pulumi.yaml names (`virtualenv`), or
// else the `python3` on PATH, through upstream's own run harness, pulumi-language-python-exec, which
// provisioning copies beside this binary from the pinned sdk module, as upstream's CLI ships it. The
// virtual environments and package lists are the sdk module's toolchain package, upstream's own code.
const (
	pythonHostName = "pulumi-language-python"
	pythonExecName = "pulumi-language-python-exec"
)

type pythonHost struct{ languageHost }

// toolchainOf reads the project's runtime options as upstream does: `virtualenv` (relative to the
// project root) and `toolchain` (pip, poetry or uv; unset: found from lock files, else pip).
func toolchainOf(info *pulumirpc.ProgramInfo) (toolchain.Toolchain, error) {
	options := info.GetOptions().AsMap()
	chosen := toolchain.PythonOptions{Root: info.GetRootDirectory(), ProgramDir: info.GetProgramDirectory()}
	if virtualenv, ok := options["virtualenv"].(string); ok {
		chosen.Virtualenv = virtualenv
	}
	switch name, _ := options["toolchain"].(string); name {
	case "":
		chosen.Toolchain = toolchain.Auto
	case "pip":
		chosen.Toolchain = toolchain.Pip
	case "poetry":
		chosen.Toolchain = toolchain.Poetry
	case "uv":
		chosen.Toolchain = toolchain.Uv
	default:
		return nil, fmt.Errorf("Pulumi.yaml: runtime option toolchain is %q; use pip, poetry or uv", name)
	}
	return toolchain.ResolveToolchain(chosen)
}

func (h *pythonHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	tc, err := toolchainOf(info)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	harness, err := besideHost(pythonExecName)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	entryPoint := info.GetEntryPoint()
	if entryPoint == "" {
		entryPoint = "."
	}
	// The harness parses --parallel as a number, so it is always given.
	args := []string{"-u", harness, "--parallel", strconv.Itoa(int(req.GetParallel()))}
	for flag, value := range map[string]string{
		"monitor": req.GetMonitorAddress(), "engine": h.engineAddress, "project": req.GetProject(),
		"stack": req.GetStack(), "pwd": req.GetPwd(), "organization": req.GetOrganization(),
		"root_directory": info.GetRootDirectory(),
	} {
		if value != "" {
			args = append(args, "--"+flag, value)
		}
	}
	if req.GetDryRun() {
		args = append(args, "--dry_run", "true")
	}
	args = append(append(args, entryPoint), req.GetArgs()...)

	configEnv, err := programConfigEnv(req)
	if err != nil {
		return nil, err
	}
	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, configEnv...)
	cmd.Dir = info.GetProgramDirectory()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return runOutcome(h.children.run(cmd), "python"), nil
}

// besideHost finds a file shipped in this host's own folder.
func besideHost(name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	path := filepath.Join(filepath.Dir(self), name)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s is missing beside %s: provision the CLI again (npm run pulumi:provision)", name, self)
	}
	return path, nil
}

// installedPlugins prints the pulumi-plugin.json of every installed distribution that has one: an SDK
// package says so to name the provider plugin it needs, as upstream's host reads it.
const installedPlugins = `import importlib.metadata as m, json
found = []
for d in m.distributions():
    for f in d.files or []:
        if f.name == "pulumi-plugin.json":
            try:
                found.append(json.loads(f.read_text()))
            except Exception:
                pass
print(json.dumps(found))`

// GetRequiredPackages names the provider plugins of the SDKs installed in the program's environment.
// Without a usable environment yet (before `pulumi install`) there are none to report.
func (h *pythonHost) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	tc, err := toolchainOf(req.GetInfo())
	if err != nil || tc.ValidateVenv(ctx) != nil {
		return &pulumirpc.GetRequiredPackagesResponse{}, err
	}
	cmd, err := tc.Command(ctx, "-c", installedPlugins)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("could not list the installed Pulumi packages: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var manifests []struct {
		Resource bool   `json:"resource"`
		Name     string `json:"name"`
		Version  string `json:"version"`
		Server   string `json:"server"`
	}
	if err := json.Unmarshal(out, &manifests); err != nil {
		return nil, fmt.Errorf("could not read the installed Pulumi packages: %w", err)
	}
	packages := []*pulumirpc.PackageDependency{}
	for _, manifest := range manifests {
		if manifest.Resource && manifest.Name != "" && manifest.Version != "" {
			packages = append(packages, &pulumirpc.PackageDependency{
				Name: manifest.Name, Kind: "resource", Version: "v" + strings.TrimPrefix(manifest.Version, "v"),
				Server: manifest.Server,
			})
		}
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

// InstallDependencies creates the virtual environment Pulumi.yaml names, when missing, and installs
// requirements.txt into it (`pulumi install`, and before a program runs in a fresh checkout). With
// none named it refuses (pythonenv.go).
func (h *pythonHost) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	tc, err := toolchainOf(req.GetInfo())
	if err != nil {
		return err
	}
	if err := refuseAmbientInstall(server.Context(), tc); err != nil {
		return err
	}
	dir := req.GetInfo().GetProgramDirectory()
	return installDependencies(req, server, dir, func(stdout, stderr io.Writer) error {
		return tc.InstallDependencies(server.Context(), dir, req.GetUseLanguageVersionTools(), true, stdout, stderr)
	})
}

var pythonGenerators = generators{
	pkg: func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error) {
		return pycodegen.GeneratePackage(pythonHostName, pkg, req.GetExtraFiles(), loader)
	},
	program: func(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
		return pycodegen.GenerateProgram(program)
	},
	// The project gets a virtual environment and names where each unpublished SDK comes from (pythonenv.go).
	project: func(req *pulumirpc.GenerateProjectRequest, project workspace.Project, program *pcl.Program) error {
		options := project.Runtime.Options()
		typechecker, _ := options["typechecker"].(string)
		toolchainName, _ := options["toolchain"].(string)
		requirements, err := sdkRequirements(program, req.GetLocalDependencies())
		if err != nil {
			return err
		}
		err = pycodegen.GenerateProject(req.GetTargetDirectory(), project, program, requirements, typechecker, toolchainName)
		if err != nil {
			return err
		}
		return nameVirtualenv(req.GetTargetDirectory())
	},
}
