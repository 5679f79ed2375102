package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	gocodegen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// The Go language host: this binary started as pulumi-language-go. As upstream's does, it builds the
// program's main package with the machine's `go` (or runs the prebuilt `binary` that Pulumi.yaml
// names) and hands the engine's addresses and the stack's config to it in the environment that the
// Go SDK's pulumi.Run reads. Its code generators are pkg/v3/codegen/go.
const goHostName = "pulumi-language-go"

type goHost struct{ languageHost }

// GetRequiredPackages reports none: a Go program's plugins are installed before it runs
// (`pulumi-proxy provider install` for this package's), which is what the engine then finds.
func (h *goHost) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// InstallDependencies does what upstream's Go host does for `pulumi install` (and for `pulumi new`
// or `pulumi convert`): `go mod tidy`, which adds the go.sum entries of every package the program
// imports, then `go mod download`, in the program's folder.
func (h *goHost) InstallDependencies(req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer) error {
	dir := req.GetInfo().GetProgramDirectory()
	return installDependencies(req, server, dir, func(stdout, stderr io.Writer) error {
		for _, args := range [][]string{{"mod", "tidy"}, {"mod", "download"}} {
			goCmd := exec.CommandContext(server.Context(), "go", args...)
			goCmd.Dir, goCmd.Stdout, goCmd.Stderr = dir, stdout, stderr
			if err := goCmd.Run(); err != nil {
				return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
			}
		}
		return nil
	})
}

func (h *goHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	program, _ := info.GetOptions().AsMap()["binary"].(string)
	if program == "" {
		built, err := os.MkdirTemp("", "pulumi-go-program-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(built)
		program = filepath.Join(built, "program")
		build := exec.CommandContext(ctx, "go", "build", "-o", program, "./"+filepath.Clean(info.GetEntryPoint()))
		build.Dir = info.GetProgramDirectory()
		if output, err := build.CombinedOutput(); err != nil {
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("go build of the program failed: %v\n%s", err, output)}, nil
		}
	} else if !filepath.IsAbs(program) {
		program = filepath.Join(info.GetProgramDirectory(), program)
	}
	configEnv, err := programConfigEnv(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, program, req.GetArgs()...)
	cmd.Dir = req.GetPwd()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), configEnv...)
	for name, value := range map[string]string{
		"PULUMI_MONITOR": req.GetMonitorAddress(), "PULUMI_ENGINE": h.engineAddress,
		"PULUMI_PROJECT": req.GetProject(), "PULUMI_STACK": req.GetStack(),
		"PULUMI_ORGANIZATION": req.GetOrganization(), "PULUMI_ROOT_DIRECTORY": info.GetRootDirectory(),
		"PULUMI_DRY_RUN": strconv.FormatBool(req.GetDryRun()), "PULUMI_PARALLEL": strconv.Itoa(int(req.GetParallel())),
	} {
		cmd.Env = append(cmd.Env, name+"="+value)
	}
	return runOutcome(h.children.run(cmd), "the Go program"), nil
}

var goGenerators = generators{
	pkg: func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, _ schema.ReferenceLoader) (map[string][]byte, error) {
		return gocodegen.GeneratePackage(goHostName, pkg, req.GetLocalDependencies())
	},
	program: func(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
		return gocodegen.GenerateProgram(program)
	},
	project: func(req *pulumirpc.GenerateProjectRequest, project workspace.Project, program *pcl.Program) error {
		return gocodegen.GenerateProject(req.GetTargetDirectory(), project, program, req.GetLocalDependencies())
	},
}
