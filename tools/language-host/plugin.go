package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// RunPlugin starts a plugin written in Node.js from its source folder (PulumiPlugin.yaml or
// PulumiPolicy.yaml with `runtime: nodejs`) through @pulumi/pulumi's own harness, as upstream does:
// cmd/run-policy-pack for a policy pack (kind analyzer), cmd/run-plugin for anything else. The
// plugin's output streams back to the engine, which reads the plugin's port from it.
func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()

	pluginDir := req.GetInfo().GetProgramDirectory()
	isPolicyPack := req.GetKind() == string(apitype.AnalyzerPlugin)
	harness := "run-plugin"
	if isPolicyPack {
		harness = "run-policy-pack"
	}
	harnessPath, err := findPulumiCommand(pluginDir, harness)
	if err != nil {
		return fmt.Errorf("cannot start plugin %s: %w", req.GetName(), err)
	}
	// The policy harness takes the pack's folder last, the plugin harness first.
	args := []string{harnessPath}
	if isPolicyPack {
		args = append(append(args, req.GetArgs()...), pluginDir)
	} else {
		args = append(append(args, pluginDir), req.GetArgs()...)
	}

	env := req.GetEnv()
	if len(env) == 0 {
		env = os.Environ()
	}
	env = append(env, typeScriptEnv(req.GetInfo().GetOptions().AsMap())...)

	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = req.GetPwd()
	if !isPolicyPack {
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = stdout, stderr
		return pluginExitError(h.children.run(cmd), closer)
	}

	// Policy packs have always run in their own folder, and read the stack they check from the
	// environment; the engine only says which stack once it talks to the analyzer, so a proxy
	// answers as the analyzer first and starts the pack when it knows.
	cmd.Dir = pluginDir
	proxy, proxiedStdout, err := sdk.NewPolicyProxy(ctx, stdout)
	if err != nil {
		return fmt.Errorf("could not start the policy pack proxy for %s: %w", pluginDir, err)
	}
	stack, err := proxy.AwaitConfiguration(ctx)
	if err != nil {
		return fmt.Errorf("policy pack %s got no stack configuration: %w", pluginDir, err)
	}
	stackEnv, err := policyStackEnv(stack)
	if err != nil {
		return err
	}
	cmd.Env = append(env, stackEnv...)
	cmd.Stdout, cmd.Stderr = proxiedStdout, stderr
	if err := h.children.start(cmd); err != nil {
		return pluginExitError(err, closer)
	}
	defer h.children.forget(cmd)
	return pluginExitError(proxy.Attach(ctx, cmd), closer)
}

// policyStackEnv is how run-policy-pack learns the stack it checks.
func policyStackEnv(stack *pulumirpc.AnalyzerStackConfigureRequest) ([]string, error) {
	if stack == nil {
		return nil, nil
	}
	env := []string{}
	for name, value := range map[string]string{
		"PULUMI_NODEJS_ORGANIZATION": stack.GetOrganization(),
		"PULUMI_NODEJS_PROJECT":      stack.GetProject(),
		"PULUMI_NODEJS_STACK":        stack.GetStack(),
		"PULUMI_NODEJS_DRY_RUN":      strconv.FormatBool(stack.GetDryRun()),
	} {
		if value != "" {
			env = append(env, name+"="+value)
		}
	}
	if stack.GetConfig() != nil {
		config, err := json.Marshal(stack.GetConfig())
		if err != nil {
			return nil, fmt.Errorf("could not encode the stack configuration for the policy pack: %w", err)
		}
		env = append(env, "PULUMI_CONFIG="+string(config))
	}
	return env, nil
}

// pluginExitError words a plugin's failure for the engine, and flushes the output streams.
func pluginExitError(err error, streams io.Closer) error {
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		return fmt.Errorf("Plugin exited with non-zero exit code: %d", exitErr.ExitCode())
	case err != nil && !errors.Is(err, context.Canceled):
		return fmt.Errorf("could not run the plugin with node: %w", err)
	case err != nil:
		return err
	}
	return streams.Close()
}
