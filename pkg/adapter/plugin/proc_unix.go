//go:build unix

package plugin

import (
	"os/exec"
	"syscall"
)

// newCommand returns the command of a plugin binary, in its own process
// group, so that killing a plugin also kills what it started (a shell
// script's children keep its stdout open, and go-plugin waits for it).
func newCommand(path string) *exec.Cmd {
	cmd := exec.Command(path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// killGroup kills the process group of a started command.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
