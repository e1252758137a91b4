package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// The environment variable that marks the program's second run, inside its own mount
// namespace.
const privateMountsEnv = "KUBELET_ORACLE_PRIVATE_MOUNTS"

// runPrivately runs this program again on the same input in a private mount namespace (a
// user namespace too when not root) and exits with its status. kubelet's device manager
// listens in, and empties, the fixed directory /var/lib/kubelet/device-plugins: a real
// kubelet on this machine, or another oracle run, must not see it.
func runPrivately(input []byte) {
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Env = append(os.Environ(), privateMountsEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(input), os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	}
	fmt.Fprintln(os.Stderr, "kubelet-oracle: a private mount namespace for the device manager:", err)
	os.Exit(1)
}

// privateMounts, in the second run, puts an empty tmpfs over /var/lib, seen by this process
// only, so that the device manager's directory is its own.
func privateMounts() error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := syscall.Mount("tmpfs", "/var/lib", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=16m"); err != nil {
		return fmt.Errorf("tmpfs on /var/lib: %w", err)
	}
	return nil
}
