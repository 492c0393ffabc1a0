//go:build !linux

package main

import "os/exec"

// setPdeathsig has no equivalent outside Linux; children are still killed
// on SIGINT and SIGTERM and when the bench returns.
func setPdeathsig(cmd *exec.Cmd) {}
