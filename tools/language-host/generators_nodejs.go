package main

import (
	"github.com/hashicorp/hcl/v2"
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// The runtime the generated code targets ("nodejs", as opposed to upstream's "bun").
const generatedRuntime = "nodejs"

var nodejsGenerators = generators{
	pkg: func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader) (map[string][]byte, error) {
		return codegen.GeneratePackage("pulumi-language-nodejs", pkg, req.GetExtraFiles(),
			req.GetLocalDependencies(), req.GetLocal(), loader)
	},
	program: func(program *pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
		return codegen.GenerateProgramWithOptions(program, codegen.ProgramOptions{Runtime: generatedRuntime})
	},
	project: func(req *pulumirpc.GenerateProjectRequest, project workspace.Project, program *pcl.Program) error {
		return codegen.GenerateProject(req.GetTargetDirectory(), project, program, req.GetLocalDependencies(),
			false /* forceTsc: only upstream's conformance tests want it */, generatedRuntime)
	},
	bindOptions: []pcl.BindOption{pcl.PreferOutputVersionedInvokes},
}
