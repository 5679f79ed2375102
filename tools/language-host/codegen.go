package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	hclsyntax "github.com/pulumi/pulumi/pkg/v3/codegen/hcl2/syntax"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	codegenrpc "github.com/pulumi/pulumi/sdk/v3/proto/go/codegen"
)

// The code generators are the ones of the pkg module the CLI itself is built from, so `pulumi
// package gen-sdk`, `pulumi import` and `pulumi convert` write what the same CLI version upstream
// would. Every call gets the address of a schema loader served by the CLI. One language's generators
// (generators_nodejs.go, python.go, golang.go) plug into the three calls below.
type generators struct {
	pkg     func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error)
	program func(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error)
	project func(req *pulumirpc.GenerateProjectRequest, project workspace.Project, program *pcl.Program) error
	// Node.js code prefers the output-versioned form of invokes.
	bindOptions []pcl.BindOption
}

func (h *languageHost) GeneratePackage(_ context.Context, req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	return h.generators.generatePackage(req)
}

func (h *languageHost) GenerateProgram(_ context.Context, req *pulumirpc.GenerateProgramRequest) (*pulumirpc.GenerateProgramResponse, error) {
	return h.generators.generateProgram(req)
}

func (h *languageHost) GenerateProject(_ context.Context, req *pulumirpc.GenerateProjectRequest) (*pulumirpc.GenerateProjectResponse, error) {
	return h.generators.generateProject(req)
}

// generatePackage writes an SDK for a package schema (`pulumi package gen-sdk`).
func (g generators) generatePackage(req *pulumirpc.GeneratePackageRequest) (*pulumirpc.GeneratePackageResponse, error) {
	loader, closeLoader, err := schemaLoader(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer closeLoader()

	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.GetSchema()), &spec); err != nil {
		return nil, fmt.Errorf("the package schema is not valid JSON: %w", err)
	}
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return &pulumirpc.GeneratePackageResponse{Diagnostics: rpcDiagnostics(diags)}, nil
	}
	files, err := g.pkg(pkg, req, loader)
	if err != nil {
		return nil, err
	}
	for name, data := range files {
		target := filepath.Join(req.GetDirectory(), name)
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return nil, fmt.Errorf("could not create %s for the generated SDK: %w", filepath.Dir(target), err)
		}
		if err := os.WriteFile(target, data, 0o600); err != nil {
			return nil, fmt.Errorf("could not write the generated SDK file %s: %w", target, err)
		}
	}
	return &pulumirpc.GeneratePackageResponse{Diagnostics: rpcDiagnostics(diags)}, nil
}

// generateProgram turns PCL into source (`pulumi import`, `pulumi convert` per file).
func (g generators) generateProgram(req *pulumirpc.GenerateProgramRequest) (*pulumirpc.GenerateProgramResponse, error) {
	loader, closeLoader, err := schemaLoader(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer closeLoader()

	parser := hclsyntax.NewParser()
	for name, contents := range req.GetSource() {
		if err := parser.ParseFile(strings.NewReader(contents), name); err != nil {
			return nil, err
		}
		if parser.Diagnostics.HasErrors() {
			return &pulumirpc.GenerateProgramResponse{Diagnostics: rpcDiagnostics(parser.Diagnostics)}, nil
		}
	}
	program, diags, err := pcl.BindProgram(parser.Files, loader, g.bind(req.GetStrict())...)
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return &pulumirpc.GenerateProgramResponse{Diagnostics: rpcDiagnostics(diags)}, nil
	}
	if program == nil {
		return nil, errors.New("the PCL program bound without errors but came back empty")
	}
	files, genDiags, err := g.program(program)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GenerateProgramResponse{Source: files, Diagnostics: rpcDiagnostics(append(diags, genDiags...))}, nil
}

// generateProject writes a whole project from a folder of PCL (`pulumi convert`).
func (g generators) generateProject(req *pulumirpc.GenerateProjectRequest) (*pulumirpc.GenerateProjectResponse, error) {
	loader, closeLoader, err := schemaLoader(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer closeLoader()

	program, diags, err := pcl.BindDirectory(req.GetSourceDirectory(), loader, g.bind(req.GetStrict())...)
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return &pulumirpc.GenerateProjectResponse{Diagnostics: rpcDiagnostics(diags)}, nil
	}
	var project workspace.Project
	if err := json.Unmarshal([]byte(req.GetProject()), &project); err != nil {
		return nil, fmt.Errorf("the project sent by the engine is not valid JSON: %w", err)
	}
	if err := g.project(req, project, program); err != nil {
		return nil, err
	}
	return &pulumirpc.GenerateProjectResponse{Diagnostics: rpcDiagnostics(diags)}, nil
}

func schemaLoader(target string) (schema.ReferenceLoader, func(), error) {
	client, err := schema.NewLoaderClient(target)
	if err != nil {
		return nil, nil, fmt.Errorf("could not reach the engine's schema loader at %s: %w", target, err)
	}
	return schema.NewCachedLoader(client), func() { _ = client.Close() }, nil
}

// A non-strict bind lets `pulumi import` refer to parents and providers it does not declare.
func (g generators) bind(strict bool) []pcl.BindOption {
	options := append([]pcl.BindOption{}, g.bindOptions...)
	if !strict {
		options = append(options, pcl.NonStrictBindOptions()...)
	}
	return options
}

func rpcDiagnostics(diags hcl.Diagnostics) []*codegenrpc.Diagnostic {
	return plugin.HclDiagnosticsToRPCDiagnostics(diags)
}
