//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// asNobody makes cmd run as user and group nobody (65534), for tests that
// need file modes to bind, which root ignores.
func asNobody(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}
