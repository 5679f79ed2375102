package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// Both languages' run harnesses exit with this code after they have already printed a user-facing error.
const exitAfterReportedError = 32

// Preloaded into every program: it keeps the harness's error report from looping forever in
// Node's util.inspect on some Node releases (the file says why).
//
//go:embed inspect-guard.cjs
var inspectGuard []byte

// Preloaded into every program too: it defers the large modules of @pulumi/pulumi that most
// programs never call until they do (the file says which and why).
//
//go:embed defer-modules.cjs
var deferModules []byte

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	programDir, entryPoint := req.GetPwd(), "."
	rootDir := programDir
	if info := req.GetInfo(); info != nil {
		programDir, rootDir = info.GetProgramDirectory(), info.GetRootDirectory()
		if info.GetEntryPoint() != "" {
			entryPoint = info.GetEntryPoint()
		}
	}
	runPath, err := findPulumiCommand(programDir, "run")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	argv := []string{}
	for _, preload := range []struct {
		name    string
		content []byte
	}{{"inspect-guard", inspectGuard}, {"defer-modules", deferModules}} {
		preloadPath, removePreload, err := preloadFile(preload.name, preload.content)
		if err != nil {
			return &pulumirpc.RunResponse{Error: err.Error()}, nil
		}
		defer removePreload()
		argv = append(argv, "--require", preloadPath)
	}
	argv = append(argv, runPath, "--monitor", req.GetMonitorAddress(), "--pwd", req.GetPwd())
	for flag, value := range map[string]string{
		"engine": h.engineAddress, "organization": req.GetOrganization(), "project": req.GetProject(),
		"stack": req.GetStack(), "root-directory": rootDir,
	} {
		if value != "" {
			argv = append(argv, "--"+flag, value)
		}
	}
	if req.GetParallel() > 0 {
		argv = append(argv, "--parallel", strconv.Itoa(int(req.GetParallel())))
	}
	if req.GetDryRun() {
		argv = append(argv, "--dry-run")
	}
	argv = append(argv, entryPoint)
	argv = append(argv, req.GetArgs()...)

	configEnv, err := programConfigEnv(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", argv...)
	cmd.Dir = req.GetPwd()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), configEnv...)
	cmd.Env = append(cmd.Env, typeScriptEnv(req.GetInfo().GetOptions().AsMap())...)

	return runOutcome(h.children.run(cmd), "node"), nil
}

// runOutcome is what the engine is told of a finished program run by `interpreter`.
func runOutcome(err error, interpreter string) *pulumirpc.RunResponse {
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}
	case errors.As(err, &exitErr) && exitErr.ExitCode() == exitAfterReportedError:
		return &pulumirpc.RunResponse{Bail: true}
	case errors.As(err, &exitErr):
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode())}
	default:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run %s: %v", interpreter, err)}
	}
}

// programConfigEnv is the stack's config as a program's runtime reads it from its environment.
func programConfigEnv(req *pulumirpc.RunRequest) ([]string, error) {
	// A stack without config has a nil map and slice, which json.Marshal writes as null; the Node
	// runtime parses PULUMI_CONFIG with Object.keys and fails on null. Upstream's host sends {} and [].
	configMap := req.GetConfig()
	if configMap == nil {
		configMap = map[string]string{}
	}
	secretKeyList := req.GetConfigSecretKeys()
	if secretKeyList == nil {
		secretKeyList = []string{}
	}
	config, err := json.Marshal(configMap)
	if err != nil {
		return nil, err
	}
	secretKeys, err := json.Marshal(secretKeyList)
	if err != nil {
		return nil, err
	}
	return []string{"PULUMI_CONFIG=" + string(config), "PULUMI_CONFIG_SECRET_KEYS=" + string(secretKeys)}, nil
}

// preloadFile gives node a file holding an embedded preload, and what to do once the run ends.
// It is written once into the user's cache, named after its content: a per-run temporary file would
// be left behind whenever the engine stops this host before Run returns, as it does after a failed
// resource. Without a usable cache folder (no HOME, say) the run gets its own temporary file.
func preloadFile(name string, content []byte) (string, func(), error) {
	keep := func() {}
	if cacheDir, err := os.UserCacheDir(); err == nil {
		sum := sha256.Sum256(content)
		target := filepath.Join(cacheDir, "pulumi-language-nodejs", fmt.Sprintf("%s-%x.cjs", name, sum[:8]))
		if existing, err := os.ReadFile(target); err == nil && bytes.Equal(existing, content) {
			return target, keep, nil
		}
		if os.MkdirAll(filepath.Dir(target), 0o700) == nil {
			if written, err := writeTempPreload(filepath.Dir(target), name, content); err == nil {
				if os.Rename(written, target) == nil {
					return target, keep, nil
				}
				os.Remove(written)
			}
		}
	}
	written, err := writeTempPreload("", name, content)
	if err != nil {
		return "", keep, fmt.Errorf("could not write the language host's %s preload: %w", name, err)
	}
	return written, func() { os.Remove(written) }, nil
}

// writeTempPreload writes a preload under a fresh name in dir (the system's temporary folder if empty).
func writeTempPreload(dir, name string, content []byte) (string, error) {
	file, err := os.CreateTemp(dir, "pulumi-language-nodejs-"+name+"-*.cjs")
	if err != nil {
		return "", err
	}
	_, err = file.Write(content)
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		os.Remove(file.Name())
		return "", err
	}
	return file.Name(), nil
}

// findPulumiCommand resolves one of @pulumi/pulumi's entry points (cmd/run, cmd/run-plugin,
// cmd/run-policy-pack) the way Node would from dir.
func findPulumiCommand(dir, command string) (string, error) {
	for at := dir; ; at = filepath.Dir(at) {
		candidate := filepath.Join(at, "node_modules", "@pulumi", "pulumi", "cmd", command)
		if _, err := os.Stat(filepath.Join(candidate, "index.js")); err == nil {
			return candidate, nil
		}
		if parent := filepath.Dir(at); parent == at {
			return "", fmt.Errorf("@pulumi/pulumi is not installed for %s: run npm install there", dir)
		}
	}
}

// typeScriptEnv mirrors upstream's runtime options: the run harness loads ts-node only when told to,
// and upstream tells it to unless Pulumi.yaml sets `typescript: false`. A `tsconfig` option names
// the config file ts-node uses instead of the program directory's tsconfig.json.
func typeScriptEnv(options map[string]interface{}) []string {
	env := []string{}
	if enabled, ok := options["typescript"].(bool); !ok || enabled {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if tsconfig, ok := options["tsconfig"].(string); ok && tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+tsconfig)
	}
	return env
}
