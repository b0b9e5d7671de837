//go:build windows

package main

import "os/exec"

// asNobody does nothing on Windows, where os.Getuid is -1 and no test
// runs a command as another user.
func asNobody(*exec.Cmd) {}
