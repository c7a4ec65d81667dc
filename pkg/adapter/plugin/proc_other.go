//go:build !unix

package plugin

import "os/exec"

func newCommand(path string) *exec.Cmd { return exec.Command(path) }

func killGroup(*exec.Cmd) {}
