//go:build unix

package webhook

import "syscall"

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
