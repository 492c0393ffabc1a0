package main

import (
	"os/exec"
	"syscall"
)

// setPdeathsig asks the kernel to SIGKILL the child when the bench dies,
// even by SIGKILL, so that no worker or broker outlives it.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
