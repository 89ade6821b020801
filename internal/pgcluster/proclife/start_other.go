//go:build !linux

package proclife

import "syscall"

const supported = false

func setDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
