// pulumi-language-nodejs, -python, -go and -yaml for machines that cannot download the Pulumi CLI.
//
// Upstream's language hosts live in Go modules that the module proxy does not serve, so the
// provisioning script builds this one instead, against the same pinned pulumi modules, and installs
// it under each name: the name it is started as is the language it serves (python.go and golang.go
// hold all of those languages' sides; yaml.go runs upstream's YAML host, which is served, under this
// one). It serves the LanguageRuntime calls that the CLI makes for a Node.js project: Run (run.go)
// hands a program to @pulumi/pulumi's own `cmd/run` harness, RunPlugin (plugin.go) starts policy
// packs and plugins from source the same way, the Generate* calls (codegen.go) use the Node.js code
// generator of the pkg module the CLI is built from, Link (link.go) adds generated SDKs to a
// program, and packages.go reports and installs dependencies. Anything else answers Unimplemented,
// which the engine treats as "not supported". The host exits, with everything it started, once the
// engine stops answering.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Set at build time with -ldflags, so the engine sees the pinned version.
var version = "0.0.0-dev"

// How often the host asks the engine whether it is still there. Upstream waits five minutes; a
// killed `pulumi up` would leave this host, and the program it runs, that long.
const engineCheckInterval = time.Second

// languageHost is what the hosts of every language share: the engine's address, the processes they
// started, and their language's code generators (codegen.go).
type languageHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string
	children      *children
	generators    generators
}

// host serves Node.js programs (run.go, plugin.go, packages.go, link.go).
type host struct{ languageHost }

// hostName is the executable's name, which is also how the engine names it: every message says it.
var hostName = filepath.Base(os.Args[0])

func main() {
	if len(os.Args) == 2 && os.Args[1] == buildYamlFlag {
		buildYamlOnly() // does not return
	}
	// The engine passes its own address last; earlier arguments are logging flags we do not use.
	args := os.Args[1:]
	engineAddress := ""
	for i := len(args) - 1; i >= 0; i-- {
		if !strings.HasPrefix(args[i], "-") {
			engineAddress = args[i]
			break
		}
	}
	running := &children{cmds: map[*exec.Cmd]struct{}{}}
	if engineAddress != "" {
		engineGone, stopWatching := context.WithCancel(context.Background())
		defer stopWatching()
		if err := rpcutil.Healthcheck(engineGone, engineAddress, engineCheckInterval, stopWatching); err != nil {
			fmt.Fprintf(os.Stderr, "%s: could not watch the engine at %s: %v\n", hostName, engineAddress, err)
			os.Exit(1)
		}
		go func() {
			<-engineGone.Done()
			running.killAllAndExit()
		}()
	}
	if servesYaml() {
		runYaml(running) // does not return
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			shared := languageHost{engineAddress: engineAddress, children: running}
			switch hostName {
			case pythonHostName:
				shared.generators = pythonGenerators
				pulumirpc.RegisterLanguageRuntimeServer(srv, &pythonHost{shared})
			case goHostName:
				shared.generators = goGenerators
				pulumirpc.RegisterLanguageRuntimeServer(srv, &goHost{shared})
			default:
				shared.generators = nodejsGenerators
				pulumirpc.RegisterLanguageRuntimeServer(srv, &host{shared})
			}
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: could not start the language host: %v\n", hostName, err)
		os.Exit(1)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "%s: stopped serving: %v\n", hostName, err)
		os.Exit(1)
	}
}

func (h *languageHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// children are the node processes this host started (programs and plugins). Once the engine is
// gone nobody will ever read their results, so they are killed with the host.
type children struct {
	mu   sync.Mutex
	cmds map[*exec.Cmd]struct{}
}

// run starts cmd, waits for it and forgets it; the process is killed when the engine goes away.
func (c *children) run(cmd *exec.Cmd) error {
	if err := c.start(cmd); err != nil {
		return err
	}
	defer c.forget(cmd)
	return cmd.Wait()
}

func (c *children) start(cmd *exec.Cmd) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmds[cmd] = struct{}{}
	return nil
}

func (c *children) forget(cmd *exec.Cmd) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cmds, cmd)
}

// killAllAndExit ends every child, and when this host leads its own process group (the engine
// starts plugins that way) everything else in that group too, such as processes a program spawned.
func (c *children) killAllAndExit() {
	c.mu.Lock()
	for cmd := range c.cmds {
		_ = cmd.Process.Kill()
	}
	c.mu.Unlock()
	fmt.Fprintf(os.Stderr, "%s: the engine is gone; stopping\n", hostName)
	if syscall.Getpgrp() == os.Getpid() {
		_ = syscall.Kill(-os.Getpid(), syscall.SIGKILL)
	}
	os.Exit(1)
}
