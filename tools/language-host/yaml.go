package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Pulumi YAML: this binary started as pulumi-language-yaml (or as pulumi-converter-yaml, which
// `pulumi convert --from yaml` finds on PATH) runs upstream's own host (or converter) from the
// github.com/pulumi/pulumi-yaml module. That module does not build against the pulumi modules the
// CLI is built from (their plugin API changed since), so it is built on its own, with the versions
// its go.mod names, by `go install`: on the first YAML program, not when the CLI is provisioned, as
// most machines never run one. It lands in a folder beside this host (yamlBinary), under a lock,
// and stays.
//
// This process stays the parent of upstream's: its engine watch (main.go) stops it within a second
// of the engine's death, where upstream's own check waits minutes.
const (
	yamlHostName      = "pulumi-language-yaml"
	yamlConverterName = "pulumi-converter-yaml"
	yamlModule        = "github.com/pulumi/pulumi-yaml"
	yamlVersion       = "v1.25.0"
)

func servesYaml() bool { return hostName == yamlHostName || hostName == yamlConverterName }

// runYaml builds upstream's binary when missing, runs it with this process's arguments and streams,
// and exits with its status.
func runYaml(running *children) {
	binary, err := yamlBinary(hostName)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", hostName, err)
		os.Exit(1)
	}
	cmd := exec.Command(binary, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = running.run(cmd)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: could not run %s: %v\n", hostName, binary, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// buildYamlFlag, as the only argument under any of this binary's names, builds upstream's YAML host
// and converter when missing, prints the host's path and exits: the test suite runs it once before
// any test, so that no timed test pays for the build.
const buildYamlFlag = "--build-yaml"

func buildYamlOnly() {
	binary, err := yamlBinary(yamlHostName)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", hostName, err)
		os.Exit(1)
	}
	fmt.Println(binary)
	os.Exit(0)
}

// yamlBinary is the path of upstream's `name` command at yamlVersion, built first if missing. The
// folder is pulumi-yaml/<version> beside this binary; provisioning makes pulumi-yaml a link to one
// folder that every build of this host shares, so a changed host does not build it again.
func yamlBinary(name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(self), "pulumi-yaml", yamlVersion)
	binary := filepath.Join(dir, name)
	if _, err := os.Stat(binary); err == nil {
		return binary, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	// Another start may have built it while this one waited for the lock.
	if _, err := os.Stat(binary); err == nil {
		return binary, nil
	}
	return binary, buildYaml(dir)
}

// buildYaml installs both of upstream's commands into dir through a scratch folder, so that a
// killed build leaves nothing that looks finished.
func buildYaml(dir string) error {
	// Holding the lock, any scratch folder left is a killed build's.
	if leftovers, err := filepath.Glob(filepath.Join(dir, "build-*")); err == nil {
		for _, leftover := range leftovers {
			os.RemoveAll(leftover)
		}
	}
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("Pulumi YAML runs upstream's %s, which this machine builds from %s@%s with Go 1.24 or newer, "+
			"and no `go` is on PATH: install Go, or use a Pulumi CLI that ships the YAML host", hostName, yamlModule, yamlVersion)
	}
	scratch, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	fmt.Fprintf(os.Stderr, "%s: building %s@%s with go install (once; a few minutes)\n", hostName, yamlModule, yamlVersion)
	args := []string{"install", "-trimpath", "-ldflags", "-s -w -X " + yamlModule + "/pkg/version.Version=" + yamlVersion}
	for _, name := range []string{yamlHostName, yamlConverterName} {
		args = append(args, yamlModule+"/cmd/"+name+"@"+yamlVersion)
	}
	install := exec.Command("go", args...)
	install.Dir = scratch
	// A program's own Go settings (-mod=mod, a workspace) must not reach an install by version.
	install.Env = append(withoutGoSettings(os.Environ()), "GOBIN="+scratch, "GOFLAGS=", "GOWORK=off")
	if output, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s failed: %v\n%s", strings.Join(args, " "), err, output)
	}
	for _, name := range []string{yamlHostName, yamlConverterName} {
		if err := os.Rename(filepath.Join(scratch, name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

func withoutGoSettings(env []string) []string {
	kept := []string{}
	for _, entry := range env {
		if !strings.HasPrefix(entry, "GOBIN=") && !strings.HasPrefix(entry, "GOFLAGS=") && !strings.HasPrefix(entry, "GOWORK=") {
			kept = append(kept, entry)
		}
	}
	return kept
}

// lockFile holds an exclusive lock on path until the returned function is called; a process that
// dies holding it releases it with its descriptors.
func lockFile(path string) (func(), error) {
	file, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX); err != nil {
		file.Close()
		return nil, err
	}
	return func() { file.Close() }, nil
}
