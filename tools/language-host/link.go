package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/cgstrings"
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Link, for Python and Go programs, has nothing to do when no SDK was generated locally, which is
// what `pulumi convert` asks for a program whose packages are all plugins (the CLI links even an
// empty list). Adding a local SDK to a Python or Go program is not implemented.
func (h *languageHost) Link(_ context.Context, req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	if len(req.GetPackages()) == 0 {
		return &pulumirpc.LinkResponse{}, nil
	}
	return nil, status.Errorf(codes.Unimplemented, "%s cannot link locally generated SDKs; install the package's own SDK instead", hostName)
}

// Link adds locally generated SDKs to a program's package.json (`pulumi package add`, and `pulumi
// convert` for the packages a PCL program uses) and says how to import them.
func (h *host) Link(ctx context.Context, req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	programDir := req.GetInfo().GetProgramDirectory()
	if len(req.GetPackages()) == 0 {
		return &pulumirpc.LinkResponse{}, nil
	}
	loader, closeLoader, err := schemaLoader(req.GetLoaderTarget())
	if err != nil {
		return nil, err
	}
	defer closeLoader()
	manager, err := npm.ResolvePackageManager(npm.AutoPackageManager, programDir)
	if err != nil {
		return nil, err
	}
	moduleSyntax := usesModuleSyntax(req.GetInfo().GetOptions().AsMap(), programDir)
	var imports strings.Builder
	for _, dependency := range req.GetPackages() {
		pkg, err := loadLinkedPackage(ctx, loader, dependency.GetPackage())
		if err != nil {
			return nil, err
		}
		packageName := nodePackageName(pkg)
		if err := manager.Link(ctx, programDir, packageName, dependency.GetPath()); err != nil {
			return nil, fmt.Errorf("could not link the SDK of %s from %s: %w", pkg.Name, dependency.GetPath(), err)
		}
		if moduleSyntax {
			fmt.Fprintf(&imports, "  import * as %s from \"%s\";\n", cgstrings.Camel(pkg.Name), packageName)
		} else {
			fmt.Fprintf(&imports, "  const %s = require(\"%s\");\n", cgstrings.Camel(pkg.Name), packageName)
		}
	}
	language := "JavaScript"
	if moduleSyntax {
		language = "TypeScript"
	}
	return &pulumirpc.LinkResponse{
		ImportInstructions: "You can import the SDK in your " + language + " code with:\n\n" + imports.String(),
	}, nil
}

func loadLinkedPackage(ctx context.Context, loader schema.ReferenceLoader, desc *pulumirpc.PackageDependency) (*schema.Package, error) {
	descriptor := &schema.PackageDescriptor{Name: desc.GetName(), DownloadURL: desc.GetServer()}
	if v, err := semver.ParseTolerant(desc.GetVersion()); err == nil {
		descriptor.Version = &v
	}
	if p := desc.GetParameterization(); p != nil {
		descriptor.Parameterization = &schema.ParameterizationDescriptor{Name: p.GetName(), Value: p.GetValue()}
		if v, err := semver.ParseTolerant(p.GetVersion()); err == nil {
			descriptor.Parameterization.Version = v
		}
	}
	ref, err := schema.LoadPackageReferenceV2(ctx, loader, descriptor)
	if err != nil {
		return nil, fmt.Errorf("could not load the schema of %s: %w", desc.GetName(), err)
	}
	pkg, err := ref.Definition()
	if err != nil {
		return nil, err
	}
	return pkg, pkg.ImportLanguages(map[string]schema.Language{"nodejs": codegen.Importer})
}

// nodePackageName is the npm name a generated SDK is published under.
func nodePackageName(pkg *schema.Package) string {
	if info, ok := pkg.Language["nodejs"].(codegen.NodePackageInfo); ok && info.PackageName != "" {
		return info.PackageName
	}
	if pkg.Namespace != "" {
		return "@" + pkg.Namespace + "/" + pkg.Name
	}
	return "@pulumi/" + pkg.Name
}

// usesModuleSyntax: TypeScript programs (the default, or a tsconfig.json above the program) and
// ES module packages import; CommonJS JavaScript requires.
func usesModuleSyntax(options map[string]interface{}, programDir string) bool {
	if enabled, ok := options["typescript"].(bool); !ok || enabled {
		return true
	}
	for dir := programDir; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "tsconfig.json")); err == nil {
			return true
		}
		if manifest, _, err := npm.ReadPackageManifest(dir); err == nil {
			return manifest["type"] == "module"
		}
		if filepath.Dir(dir) == dir {
			return false
		}
	}
}
